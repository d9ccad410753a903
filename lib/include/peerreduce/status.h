// Status and StatusOr<T>: how every fallible peerreduce call reports its outcome.
//
// Contract:
// - No exception crosses the library boundary; every operating error comes back as a Status whose
//   code says what kind of failure it is and whose message says what, where (rank, peer, link, op,
//   size) and what to do about it.
// - An ok Status carries no message and costs no allocation, so returning one on the allreduce hot
//   path is free.
// - Status is a value type: copyable, movable, safe to pass between threads.
//
// Example:
//   peerreduce::Status s = comm->allreduce(send, recv, n, DataType::kFloat32, ReduceOp::kSum, stream);
//   if (!s.isOk()) std::fprintf(stderr, "%s\n", s.toString().c_str());
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace peerreduce {

// Kinds of failure. Values are stable: the C API's prResult_t uses the same numbers.
enum class ErrorCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // the caller passed something wrong; nothing was changed
  kOutOfMemory = 2,      // a pool or quota is exhausted; the message names the setting to change
  kTimeout = 3,          // a bounded wait expired; the message names rank, peer and step
  kRemoteError = 4,      // a peer reported an error of its own
  kPeerLost = 5,         // a peer crashed or left
  kLinkDown = 6,         // a link between two ranks stopped working
  kAborted = 7,          // the communicator was aborted; recreate or shrink it
  kUnsupported = 8,      // valid request this build or platform cannot do
  kInternal = 9,         // a bug in peerreduce; please report it with the message
  kUnavailable = 10,     // a resource (device, peer access, bootstrap) is not there
  kMismatch = 11,        // ranks disagree (count, dtype, op, configuration, world size)
  kCorrupt = 12,         // a message or handle received from a peer is malformed
};

// Short lower-case name of a code, e.g. "invalid argument".
std::string_view errorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool isOk() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "<code name>: <message>", or "ok".
  std::string toString() const;

  // Returns a copy whose message is prefixed with `context` ("while creating rank 3: ...").
  Status withContext(std::string_view context) const;

  // Explicitly discard a status where ignoring it is the right thing (cleanup on an error path).
  void ignoreError() const {}

  friend bool operator==(const Status& a, const Status& b) { return a.code_ == b.code_ && a.message_ == b.message_; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

Status invalidArgumentError(std::string message);
Status outOfMemoryError(std::string message);
Status timeoutError(std::string message);
Status remoteError(std::string message);
Status peerLostError(std::string message);
Status linkDownError(std::string message);
Status abortedError(std::string message);
Status unsupportedError(std::string message);
Status internalError(std::string message);
Status unavailableError(std::string message);
Status mismatchError(std::string message);
Status corruptError(std::string message);

// A value of T or the Status saying why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}         // NOLINT(google-explicit-constructor): mirrors absl
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (status_.isOk()) status_ = internalError("StatusOr constructed from an ok Status without a value");
  }

  bool isOk() const { return status_.isOk(); }
  const Status& status() const { return status_; }

  // Precondition: isOk(). Checked: calling these on an error is a programmer error.
  T& value() & { return checkedValue(); }
  const T& value() const& { return const_cast<StatusOr*>(this)->checkedValue(); }
  T&& value() && { return std::move(checkedValue()); }
  T* operator->() { return &checkedValue(); }
  const T* operator->() const { return &const_cast<StatusOr*>(this)->checkedValue(); }
  T& operator*() & { return checkedValue(); }
  const T& operator*() const& { return const_cast<StatusOr*>(this)->checkedValue(); }

 private:
  T& checkedValue();

  Status status_;
  std::optional<T> value_;
};

namespace detail {
[[noreturn]] void dieOnBadStatusOrAccess(const Status& status);
}  // namespace detail

template <typename T>
T& StatusOr<T>::checkedValue() {
  if (!value_.has_value()) detail::dieOnBadStatusOrAccess(status_);
  return *value_;
}

}  // namespace peerreduce

#define PR_STATUS_CONCAT_INNER_(a, b) a##b
#define PR_STATUS_CONCAT_(a, b) PR_STATUS_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function when it is not ok.
#define PR_RETURN_IF_ERROR(expr)                       \
  do {                                                 \
    ::peerreduce::Status pr_status_tmp_ = (expr);      \
    if (!pr_status_tmp_.isOk()) return pr_status_tmp_; \
  } while (false)

// `lhs = value of expr`, or return its error Status. `lhs` may declare a variable: PR_ASSIGN_OR_RETURN(auto x, f());
#define PR_ASSIGN_OR_RETURN(lhs, expr) PR_ASSIGN_OR_RETURN_IMPL_(PR_STATUS_CONCAT_(pr_statusor_, __LINE__), lhs, expr)
#define PR_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.isOk()) return tmp.status();           \
  lhs = std::move(tmp).value()
