// Host entry points to the GPU kernels: the plan interpreter (kernels/plan_interpreter.cu), the fused
// one-shot and two-shot kernels (kernels/fused_kernels.cuh), the low-latency one-shot and two-shot
// (kernels/line_kernels.cu) and the low-latency reduce-scatter, all-gather and broadcast
// (kernels/collective_line_kernels.cu).
#pragma once

#include "device_plan.h"
#include "portability.h"

namespace peerreduce::gpu {

// Threads per block: 16 warps keep enough 16-byte loads in flight per SM to saturate a peer link
// with one block per SM.
inline constexpr unsigned kPlanKernelThreads = 512;

// Launches the interpreter for one rank's program with `blocks` blocks on `stream`. dtype and op are
// DataType and ReduceOp values (checked by the caller). Returns the launch's error, if any.
// With args.fused set, launches the fused or low-latency kernel of that shape instead.
hipError_t launchPlanKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream);
// The fused kernel of args.fused (kFusedOneShot, kFusedTwoShot; the push kernels through launchPushKernel).
hipError_t launchFusedKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream);
// The push two-shot or, at two ranks, the push one-shot (args.fused kPushTwoShot, kPushOneShot;
// kernels/push_kernels.cuh).
hipError_t launchPushKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream);
// The low-latency one-shot or two-shot (args.fused kLowLatencyOneShot or kLowLatencyTwoShot; args.line_capacity
// and the peers' lines set).
hipError_t launchLowLatencyKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream);
// The low-latency reduce-scatter, all-gather or broadcast (args.fused kLowLatencyReduceScatter,
// kLowLatencyAllGather, kLowLatencyBroadcast; kernels/collective_line_kernels.cu).
hipError_t launchCollectiveLineKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream);
// The low-latency one-shot or two-shot (args.fused) over the buffers of `table` (a batch) instead of
// args.send / args.recv.
hipError_t launchBatchedLowLatencyKernel(const LaunchArgs& args, const BatchTable& table, int dtype, unsigned blocks,
                                         hipStream_t stream);

// Loads every kernel the launchers above may start, for every dtype x op, into the current device's
// context (portability.h, loadKernel: a kernel first launched behind one that waits for it may never
// start). The first error, if any.
hipError_t loadKernels();
hipError_t loadFusedKernels();  // the push kernels too
hipError_t loadPushKernels();
hipError_t loadLineKernels();
hipError_t loadCollectiveLineKernels();

// The PTX version the kernels that run on the current device were compiled from: the smallest over the
// kernel files (one kernel of each asked; a file's kernels share its compile flags), -1 where unknown
// (HIP, or the query failed). Launches overlap (programmatic dependent launch) only when it is at least
// kGridDependencyPtxVersion: below, awaitPriorGrid() compiled to nothing (lib/gpu/kernel_choice.h).
int kernelsPtxVersion();
int planKernelsPtxVersion();
int fusedKernelsPtxVersion();
int pushKernelsPtxVersion();
int lineKernelsPtxVersion();
int collectiveLineKernelsPtxVersion();

}  // namespace peerreduce::gpu
