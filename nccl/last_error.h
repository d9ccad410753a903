// This thread's last error, as ncclGetLastError reports it: the message of peerreduce's side when the last
// failure was peerreduce's (a taken call, a creation step, loading NCCL), the real NCCL's own message when
// the last failure was a forwarded call's. Like NCCL's, a success leaves the message as it was.
#pragma once

#include <exception>
#include <new>
#include <string_view>

#include "nccl/nccl_values.h"
#include "peerreduce/peerreduce.h"
#include "peerreduce/status.h"

namespace peerreduce::nccl {

// Makes "<function>: peerreduce: <code name>: <message>" this thread's last error; returns the NCCL result
// the error maps to (type_mapping.h).
int recordError(const char* function, const Status& status) noexcept;
// The same for a failed call of peerreduce's C API, whose message is prGetLastError()'s.
int recordPeerreduceFailure(const char* function, prResult_t result) noexcept;
// A forwarded call's result: a failure makes the real library's message the one to report.
int noteRealResult(int result) noexcept;
// This thread's message when the last failure was peerreduce's; null when it was the real library's or
// nothing failed.
const char* ownLastError() noexcept;

// Runs `body` (returning an NCCL result) so that no exception reaches the application.
template <typename Body>
int guarded(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return recordError(function, outOfMemoryError("out of host memory"));
  } catch (const std::exception& e) {
    return recordError(function, internalError(std::string("unexpected exception (") + e.what() +
                                               "); this is a peerreduce bug, please report it"));
  } catch (...) {
    return recordError(function,
                       internalError("unexpected non-standard exception; this is a peerreduce bug, please report it"));
  }
}

}  // namespace peerreduce::nccl
