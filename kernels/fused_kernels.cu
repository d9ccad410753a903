// Fused kernels: the one-shot and two-shot programs written out, for the ranks whose program is
// exactly that shape (the host checks it step by step: lib/gpu/fused_shape.h). They do what the plan
// interpreter does for those programs, step for step (the same copies, the same signals on the same
// per-block counters, the same waits, the same reductions in rank order), without reading step
// descriptors or source tables from memory, so GPU results stay bit-identical to the simulator's and
// fused and interpreted operations can follow one another on one communicator.
#include "device_plan.h"
#include "plan_device.cuh"
#include "plan_kernel_launch.h"
#include "portability.h"
#include "reduce_ops.h"

namespace peerreduce::gpu {
namespace {

// Block b's slice [lo, hi) of chunk `chunk` (elements from the chunk's start `begin`), sliced exactly
// as the interpreter slices a data step.
struct BlockSlice {
  std::uint64_t begin = 0;
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
};

template <typename T>
__device__ BlockSlice sliceOf(const LaunchArgs& a, int chunk) {
  BlockSlice s;
  s.begin = min(static_cast<std::uint64_t>(chunk) * a.chunk_capacity, a.count);
  const std::uint64_t size = min(s.begin + a.chunk_capacity, a.count) - s.begin;
  constexpr std::uint64_t kPerVector = kVectorBytes / sizeof(T);
  const std::uint64_t vectors = (size + kPerVector - 1) / kPerVector;
  const std::uint64_t per_block = (vectors + gridDim.x - 1) / gridDim.x * kPerVector;
  s.lo = min(static_cast<std::uint64_t>(blockIdx.x) * per_block, size);
  s.hi = min(s.lo + per_block, size);
  return s;
}

__device__ unsigned char* scratchOf(const LaunchArgs& a, int rank, int slot) {
  return a.peers->scratch[rank] + a.scratch_offset + static_cast<std::uint64_t>(slot) * a.slot_bytes;
}

__device__ const unsigned char* inputOf(const LaunchArgs& a) { return static_cast<const unsigned char*>(a.send); }
__device__ unsigned char* outputOf(const LaunchArgs& a) { return static_cast<unsigned char*>(a.recv); }

// Signals `flag` to every peer in rank order; the first signal fences this block's data accesses.
__device__ void signalEveryPeer(const LaunchArgs& a, int flag) {
  bool fence = true;
  for (int q = 0; q < a.world_size; ++q) {
    if (q == a.rank) continue;
    signalPeer(a, q, flag, fence);
    fence = false;
  }
}

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
  reduceSlice<T, Op>(reinterpret_cast<T*>(dst_chunk_base + s.lo * sizeof(T)), sources, a.world_size, s.hi - s.lo,
                     a.op == kOpAvg, a.world_size);
}

// One-shot: publish the input in scratch slot 0, signal every peer, wait for every peer, reduce all
// ranks' slot 0 in rank order into the output.
template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads) oneShotKernel(LaunchArgs a) {
  if (!passEntryFence(a, a.peers->counters[a.rank])) return;
  const BlockSlice s = sliceOf<T>(a, 0);
  if (s.hi > s.lo) {
    copySlice(scratchOf(a, a.rank, 0) + s.lo * sizeof(T), inputOf(a) + (s.begin + s.lo) * sizeof(T),
              (s.hi - s.lo) * sizeof(T));
  }
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
  if (!passEntryFence(a, a.peers->counters[a.rank])) return;
  const int n = a.world_size;
  for (int c = 0; c < n; ++c) {
    const BlockSlice s = sliceOf<T>(a, c);
    if (s.hi > s.lo) {
      copySlice(scratchOf(a, a.rank, c) + s.lo * sizeof(T), inputOf(a) + (s.begin + s.lo) * sizeof(T),
                (s.hi - s.lo) * sizeof(T));
    }
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
void launchShape(const LaunchArgs& args, unsigned blocks, hipStream_t stream) {
  if (args.fused == kFusedOneShot) {
    oneShotKernel<T, Op><<<blocks, kPlanKernelThreads, 0, stream>>>(args);
  } else {
    twoShotKernel<T, Op><<<blocks, kPlanKernelThreads, 0, stream>>>(args);
  }
}

template <typename T>
hipError_t launchFusedForType(const LaunchArgs& args, unsigned blocks, hipStream_t stream) {
  switch (args.op) {
    case 0: launchShape<T, kernels::Sum>(args, blocks, stream); break;
    case 1: launchShape<T, kernels::Prod>(args, blocks, stream); break;
    case 2: launchShape<T, kernels::Min>(args, blocks, stream); break;
    case 3: launchShape<T, kernels::Max>(args, blocks, stream); break;
    default: launchShape<T, kernels::Sum>(args, blocks, stream); break;  // avg: the sum, divided when finalising
  }
  return hipGetLastError();
}

}  // namespace

hipError_t launchFusedKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream) {
  switch (dtype) {
    case 0: return launchFusedForType<std::int8_t>(args, blocks, stream);
    case 1: return launchFusedForType<std::uint8_t>(args, blocks, stream);
    case 2: return launchFusedForType<std::int32_t>(args, blocks, stream);
    case 3: return launchFusedForType<std::uint32_t>(args, blocks, stream);
    case 4: return launchFusedForType<std::int64_t>(args, blocks, stream);
    case 5: return launchFusedForType<std::uint64_t>(args, blocks, stream);
    case 6: return launchFusedForType<kernels::Half>(args, blocks, stream);
    case 7: return launchFusedForType<kernels::BFloat16>(args, blocks, stream);
    case 8: return launchFusedForType<float>(args, blocks, stream);
    default: return launchFusedForType<double>(args, blocks, stream);
  }
}

}  // namespace peerreduce::gpu
