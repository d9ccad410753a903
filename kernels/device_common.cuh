// Device code every GPU kernel shares: error codes, 16-byte alignment, and the two halves of every
// bounded wait (when to give up, and how the first failure is recorded for the host).
// Included by the .cu files only; everything is internal to each kernel object.
#pragma once

#include "abort_ration.h"
#include "device_plan.h"
#include "portability.h"
#include "reduce_ops.h"

namespace peerreduce::gpu {
namespace {

constexpr int kVectorBytes = 16;
constexpr std::uint32_t kPollsPerClockRead = 64;  // read the timer every 64 polls: it costs more than a poll
constexpr std::uint64_t kErrorTimeout = 3;        // ErrorCode::kTimeout
constexpr std::uint64_t kErrorAborted = 7;        // ErrorCode::kAborted
constexpr std::int32_t kOpAvg = 4;                // ReduceOp::kAvg

__device__ bool aligned(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) % kVectorBytes) == 0; }

// avg's share of one reduction of this launch (reduce_ops.h): `finalize` for a chunk's final reduction
// (an integer avg divides there), `from_send` marking the sources read from a send buffer (a floating avg
// premultiplies them). Nothing for the other ops.
__device__ kernels::AvgStep avgStep(const LaunchArgs& a, bool finalize, const std::uint8_t* from_send) {
  return kernels::AvgStep{a.op == kOpAvg, a.world_size, finalize, from_send};
}

// The first thing every kernel does: wait until the previous kernel on the stream has finished and its
// writes are visible (it may still have been running when this one was scheduled: programmatic
// dependent launch), then let the next kernel be scheduled behind this one.
__device__ void enterKernel() {
  awaitPriorGrid();
  allowNextGrid();
}

// Whether a wait that began at `start` (globalTimerNs) and has polled `polls` times must give up: every
// kPollsPerClockRead polls it checks another block's failure and the deadline (`timeout_ns` after the
// start), both in device memory, and, rationed (abort_ration.h), the abort word in host memory.
// Returns 0 to go on, else the error code.
__device__ std::uint64_t pollVerdict(const LaunchArgs& a, std::uint32_t polls, std::uint64_t start,
                                     std::uint64_t timeout_ns) {
  if ((polls % kPollsPerClockRead) != 0) return 0;
  if (*reinterpret_cast<volatile std::uint32_t*>(&a.control->failed) != 0) return kErrorAborted;
  const std::uint64_t now = globalTimerNs();
  if (now - start > timeout_ns) return kErrorTimeout;
  auto* last_check = reinterpret_cast<unsigned long long*>(&a.control->abort_checked_ns);
  const std::uint64_t last = *reinterpret_cast<volatile unsigned long long*>(last_check);
  if (!abortCheckDue(now, start, last)) return 0;
  if (atomicCAS(last_check, static_cast<unsigned long long>(last), static_cast<unsigned long long>(now)) != last) {
    return 0;  // another waiter of the launch claimed this check
  }
  atomicAdd(reinterpret_cast<unsigned long long*>(&a.control->abort_reads), 1ull);
  if (loadVolatile(a.abort_word) != 0) return kErrorAborted;
  return 0;
}

// If this is the rank's first failure, writes what was waited for into the host-mapped error report;
// then marks the launch failed, so other blocks stop waiting. In that order, with a fence between: a
// block that stops because it saw `failed` must find the report already claimed, or its "aborted"
// could replace the timeout that caused it (seen on 4 x H200 with the line kernels' many waiters).
__device__ void recordFailure(const LaunchArgs& a, std::uint64_t code, std::uint64_t step, int peer,
                              std::uint64_t reached, std::uint64_t target) {
  if (atomicCAS(reinterpret_cast<unsigned long long*>(&a.error->code), 0ull, code) == 0ull) {
    a.error->step = step;
    a.error->peer = static_cast<std::uint64_t>(peer);
    a.error->value = (reached << 32) | (target & 0xffffffffull);
  }
  __threadfence_system();
  atomicExch(&a.control->failed, 1u);
}

}  // namespace
}  // namespace peerreduce::gpu
