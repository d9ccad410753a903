// When a waiting GPU thread may read the abort word, which lives in host memory.
//
// Why a ration. Every read of host-mapped memory crosses PCIe and waits in one queue with every other
// such read of the GPU. A line kernel has thousands of threads waiting at once (one per vector), the
// pull kernels one per block; when each of them read the abort word every few polls, a wait that outlasted
// a few polls made every thread queue behind all the others, and the operation took about the number of
// waiting threads times one read: on 2 x H200 a 64 KiB allreduce took 170 us instead of 3.3, a 256 KiB
// one 620 us. The ranks then alternated (the slow rank made its peer wait past the same point in the
// next operation), so any skew between ranks, such as a PyTorch program's eager launches give,
// switched a communicator into that state for good, while a C++ loop that launched in lockstep never
// entered it.
//
// The rule. A wait reads the abort word only once it has lasted kAbortGraceNs (an operation whose peers
// are in step never crosses PCIe), and then only the waiter that claims the launch's check slot, at most
// once per kAbortCheckIntervalNs for all the waiters of the launch together: the claim is a
// compare-and-swap of the time of the last check in the rank's control block (device memory), which
// every waiter can read cheaply. Abort is seen within kAbortGraceNs + kAbortCheckIntervalNs of its
// request (plus one read), deadlines and other blocks' failures as before (device memory only).
#pragma once

#include <cstdint>

#include "portability.h"

namespace peerreduce::gpu {

// A wait shorter than this never reads host memory: peers whose launches are this close need no abort.
inline constexpr std::uint64_t kAbortGraceNs = 20000;
// At most one read of the abort word per launch (all its waiters together) in this time: a few hundred
// thousand reads a second at most, far below what PCIe serves, and an abort seen within tens of us.
inline constexpr std::uint64_t kAbortCheckIntervalNs = 10000;

// Whether a waiter that began waiting at `wait_start_ns` may try to claim the abort check at `now_ns`,
// the launch's last check having been at `last_check_ns` (0 before any). Times are the GPU's global
// timer (ns). Another waiter may have claimed a check at a time later than this waiter's `now_ns` (it
// read the timer after): the signed difference is then negative and the check not due, so the claimed
// time never moves backwards.
PR_HOST_DEVICE PR_INLINE bool abortCheckDue(std::uint64_t now_ns, std::uint64_t wait_start_ns,
                                            std::uint64_t last_check_ns) {
  const auto since_check = static_cast<std::int64_t>(now_ns - last_check_ns);
  return now_ns - wait_start_ns >= kAbortGraceNs && since_check >= static_cast<std::int64_t>(kAbortCheckIntervalNs);
}

}  // namespace peerreduce::gpu
