#include "peerreduce/status.h"

#include <cstdio>
#include <cstdlib>

namespace peerreduce {

std::string_view errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kOutOfMemory:
      return "out of memory";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kRemoteError:
      return "remote error";
    case ErrorCode::kPeerLost:
      return "peer lost";
    case ErrorCode::kLinkDown:
      return "link down";
    case ErrorCode::kAborted:
      return "aborted";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kInternal:
      return "internal error";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kMismatch:
      return "mismatch";
    case ErrorCode::kCorrupt:
      return "corrupt";
  }
  return "unknown error";
}

std::string Status::toString() const {
  if (isOk()) return "ok";
  std::string out(errorCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

Status Status::withContext(std::string_view context) const {
  if (isOk()) return *this;
  std::string message(context);
  message += ": ";
  message += message_;
  return Status(code_, std::move(message));
}

Status invalidArgumentError(std::string message) { return Status(ErrorCode::kInvalidArgument, std::move(message)); }
Status outOfMemoryError(std::string message) { return Status(ErrorCode::kOutOfMemory, std::move(message)); }
Status timeoutError(std::string message) { return Status(ErrorCode::kTimeout, std::move(message)); }
Status remoteError(std::string message) { return Status(ErrorCode::kRemoteError, std::move(message)); }
Status peerLostError(std::string message) { return Status(ErrorCode::kPeerLost, std::move(message)); }
Status linkDownError(std::string message) { return Status(ErrorCode::kLinkDown, std::move(message)); }
Status abortedError(std::string message) { return Status(ErrorCode::kAborted, std::move(message)); }
Status unsupportedError(std::string message) { return Status(ErrorCode::kUnsupported, std::move(message)); }
Status internalError(std::string message) { return Status(ErrorCode::kInternal, std::move(message)); }
Status unavailableError(std::string message) { return Status(ErrorCode::kUnavailable, std::move(message)); }
Status mismatchError(std::string message) { return Status(ErrorCode::kMismatch, std::move(message)); }
Status corruptError(std::string message) { return Status(ErrorCode::kCorrupt, std::move(message)); }

namespace detail {
void dieOnBadStatusOrAccess(const Status& status) {
  // A programmer error: the caller read a value without checking isOk(). Abort loudly.
  std::fprintf(stderr, "peerreduce: StatusOr::value() called on an error: %s\n", status.toString().c_str());
  std::abort();
}
}  // namespace detail

}  // namespace peerreduce
