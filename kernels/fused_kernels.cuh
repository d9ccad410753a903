// Fused kernels: the one-shot and two-shot programs written out, for the ranks whose program is
// exactly that shape (the host checks it step by step: lib/gpu/fused_shape.h). They do what the plan
// interpreter does for those programs, step for step (the same copies, avg's premultiplied copies of the
// send buffer included, the same signals on the same per-block counters, the same waits, the same
// reductions in rank order), without reading step
// descriptors or source tables from memory, so GPU results stay bit-identical to the simulator's and
// fused and interpreted operations can follow one another on one communicator. The pushing kernels of
// the same programs are kernels/push_kernels.cuh. Compiled per group of element types by
// kernels/typed_kernels_*.cu; launched through kernels/fused_kernels.cu.
#pragma once

#include "dispatch.h"
#include "fused_device.cuh"
#include "plan_kernel_launch.h"
#include "typed_launch.h"

namespace peerreduce::gpu::fused {
// The kernels and their helpers: this file's own in each group's file.
namespace {

// Waits, in rank order, for the first signal of `flag` from every peer's block of this index.
__device__ bool waitForEveryPeer(const LaunchArgs& a, int flag, std::uint32_t first_step) {
  const std::uint64_t* mine = a.peers->counters[a.rank];
  std::uint32_t step = first_step;
  for (int q = 0; q < a.world_size; ++q) {
    if (q == a.rank) continue;
    const std::uint32_t index = counterIndex(q, flag, static_cast<int>(blockIdx.x));
    if (!waitFor(a, mine + index, a.control->base[index] + 1, step++, q)) return false;
  }
  return true;
}

// This block's slice of chunk `chunk`: dst <- fold(slot `slot` of every rank's scratch, rank order).
template <typename T, typename Op>
__device__ void reduceAcrossRanks(const LaunchArgs& a, int chunk, int slot, unsigned char* dst_chunk_base) {
  __shared__ T* sources[kMaxRanks];
  const BlockSlice s = sliceOf<T>(a, chunk);
  __syncthreads();
  for (int q = static_cast<int>(threadIdx.x); q < a.world_size; q += static_cast<int>(blockDim.x)) {
    sources[q] = reinterpret_cast<T*>(scratchOf(a, q, slot) + s.lo * sizeof(T));
  }
  __syncthreads();
  if (s.hi == s.lo) return;
  // Published inputs were premultiplied when published (copyFromSend): no source here is a send buffer.
  reduceSlice<T, Op>(reinterpret_cast<T*>(dst_chunk_base + s.lo * sizeof(T)), sources, a.world_size, s.hi - s.lo,
                     avgStep(a, true, nullptr));
}

// One-shot: publish the input in scratch slot 0, signal every peer, wait for every peer, reduce all
// ranks' slot 0 in rank order into the output.
template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads) oneShotKernel(LaunchArgs a) {
  enterKernel();
  if (!passEntryFence(a, a.peers->counters[a.rank])) return;
  const BlockSlice s = sliceOf<T>(a, 0);
  if (s.hi > s.lo) publishSlice<T>(a, scratchOf(a, a.rank, 0), inputOf(a) + s.begin * sizeof(T), s);
  signalEveryPeer(a, a.ready_flag);
  if (!waitForEveryPeer(a, a.ready_flag, a.ready_wait_step)) return;
  reduceAcrossRanks<T, Op>(a, 0, 0, outputOf(a) + s.begin * sizeof(T));
  finishLaunch(a);
}

// Two-shot: publish chunk c of the input in scratch slot c; after every peer did, reduce chunk
// `rank` of every rank into the result slot (slot world_size); after every peer did, gather chunk c
// from rank c's result slot into the output.
template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads) twoShotKernel(LaunchArgs a) {
  enterKernel();
  if (!passEntryFence(a, a.peers->counters[a.rank])) return;
  const int n = a.world_size;
  for (int c = 0; c < n; ++c) {
    const BlockSlice s = sliceOf<T>(a, c);
    if (s.hi > s.lo) publishSlice<T>(a, scratchOf(a, a.rank, c), inputOf(a) + s.begin * sizeof(T), s);
  }
  signalEveryPeer(a, a.ready_flag);
  if (!waitForEveryPeer(a, a.ready_flag, a.ready_wait_step)) return;
  reduceAcrossRanks<T, Op>(a, a.rank, a.rank, scratchOf(a, a.rank, n));
  signalEveryPeer(a, a.result_flag);
  if (!waitForEveryPeer(a, a.result_flag, a.result_wait_step)) return;
  for (int c = 0; c < n; ++c) {
    const BlockSlice s = sliceOf<T>(a, c);
    if (s.hi > s.lo) {
      copySlice(outputOf(a) + (s.begin + s.lo) * sizeof(T), scratchOf(a, c, n) + s.lo * sizeof(T),
                (s.hi - s.lo) * sizeof(T));
    }
  }
  finishLaunch(a);
}

template <typename T, typename Op>
hipError_t launchShape(const LaunchArgs& args, unsigned blocks, hipStream_t stream) {
  const bool overlap = args.overlap_launch != 0;
  if (args.fused == kFusedOneShot) {
    return launchKernel(oneShotKernel<T, Op>, blocks, kPlanKernelThreads, stream, overlap, args);
  }
  return launchKernel(twoShotKernel<T, Op>, blocks, kPlanKernelThreads, stream, overlap, args);
}

}  // namespace

template <typename T>
hipError_t launchFor(const LaunchArgs& args, unsigned blocks, hipStream_t stream) {
  return kernels::visitReduceOp(args.op, hipErrorInvalidValue, [&](auto op) {
    return launchShape<T, typename decltype(op)::type>(args, blocks, stream);
  });
}

template <typename T>
hipError_t loadFor() {
  return loadEveryOp([](auto op) {
    using Op = typename decltype(op)::type;
    return std::array{&oneShotKernel<T, Op>, &twoShotKernel<T, Op>};
  });
}

}  // namespace peerreduce::gpu::fused
