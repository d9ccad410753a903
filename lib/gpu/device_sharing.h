// Several ranks on one GPU (for testing correctness on a machine with one GPU).
//
// Ranks that are threads of one process on the same device run their kernels side by side, and the
// kernels wait on one another: they must all be resident at once, or a waiting kernel could hold the
// multiprocessors a peer's kernel needs to start, and both would wait until their deadline. So when
// ranks share a device in one process, every kernel gets at most
//   (multiprocessors of the smallest device) / (ranks sharing one device x kMaxChannels)
// blocks: one 512-thread block per multiprocessor always fits (the kernels' launch bounds), and each rank
// may have an operation in flight on every one of its channels (eager work and graph replays). Every rank computes the
// cap from the same records, so block counts, which the kernels' per-block counters need to match, agree. Resident is
// not enough if a kernel cannot start at all: every kernel is loaded when the transport is created
// (kernels/plan_kernel_launch.h, loadKernels), since a load at first launch may wait for the running ones.
//
// Ranks of different processes on one device are not resident together at all: the device time-slices
// between the processes' contexts, and a kernel that waits makes progress only when its peer's context
// runs (measured on an H200: 4.5 ms per round trip). Their waits are bounded by the same deadlines as
// always (the communicator's timeout, 30 s by default), far longer than a time slice.
#pragma once

#include <span>

#include "gpu/peer_record.h"
#include "peerreduce/status.h"

namespace peerreduce::gpu {

// The most ranks of one process that share one device, over the world's records.
int ranksPerSharedDevice(std::span<const PeerRecord> records);

// Whether `rank` shares its device with another rank of its process.
bool sharesDeviceInProcess(std::span<const PeerRecord> records, int rank);

// A rank that shares its device with another rank of its process must give every operation a stream of
// its own: on the device's default stream (shared by every thread of the process) the ranks' kernels
// would run one after another, and the first would wait for the others until its deadline. kInvalidArgument
// naming the rank and the fix when `default_stream` and `shares_device`; ok otherwise.
Status checkStreamOfSharedDevice(bool shares_device, bool default_stream, int rank);

// The block cap above, or `uncapped` when no two ranks of one process share a device. At least 1.
int sharedDeviceBlockCap(std::span<const PeerRecord> records, int uncapped);

}  // namespace peerreduce::gpu
