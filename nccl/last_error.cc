#include "nccl/last_error.h"

#include <string>

#include "nccl/type_mapping.h"

namespace peerreduce::nccl {
namespace {

thread_local std::string own_message;
// Points into own_message, at the fixed text below when even the message could not be allocated, or is
// null when the last failure was the real library's.
thread_local const char* own_text = nullptr;

constexpr const char* kNoMemoryForMessage =
    "peerreduce: an error occurred, but there was not enough host memory to record its message";

}  // namespace

int recordError(const char* function, const Status& status) noexcept {
  const ErrorCode code = status.isOk() ? ErrorCode::kInternal : status.code();
  try {
    std::string message = function;
    message += ": peerreduce: ";
    message += errorCodeName(code);
    message += ": ";
    message += status.isOk() ? "an ok status was reported as an error; please report it" : status.message();
    own_message = std::move(message);
    own_text = own_message.c_str();
  } catch (...) {
    own_text = kNoMemoryForMessage;
  }
  return toInt(ncclResultFor(code));
}

int recordPeerreduceFailure(const char* function, prResult_t result) noexcept {
  try {
    // The C API's message already names its function and the code ("prAllReduce: timeout: ...").
    return recordError(function, cApiFailure(result));
  } catch (...) {
    own_text = kNoMemoryForMessage;
    return toInt(NcclResult::kInternalError);
  }
}

int noteRealResult(int result) noexcept {
  if (result != toInt(NcclResult::kSuccess) && result != toInt(NcclResult::kInProgress)) own_text = nullptr;
  return result;
}

const char* ownLastError() noexcept { return own_text; }

}  // namespace peerreduce::nccl
