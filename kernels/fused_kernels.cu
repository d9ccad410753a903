// Fused kernels: the one-shot and two-shot programs written out, for the ranks whose program is
// exactly that shape (the host checks it step by step: lib/gpu/fused_shape.h). They do what the plan
// interpreter does for those programs, step for step (the same copies, avg's premultiplied copies of the
// send buffer included, the same signals on the same per-block counters, the same waits, the same
// reductions in rank order), without reading step
// descriptors or source tables from memory, so GPU results stay bit-identical to the simulator's and
// fused and interpreted operations can follow one another on one communicator.
#include "device_plan.h"
#include "dispatch.h"
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

// Block b's slice of chunk `chunk`, its blocks dividing `sliced` elements (the chunk's size, or for the
// push kernel the chunk capacity) into whole vectors; clipped to the chunk.
template <typename T>
__device__ BlockSlice sliceBy(const LaunchArgs& a, int chunk, bool by_capacity) {
  BlockSlice s;
  s.begin = min(static_cast<std::uint64_t>(chunk) * a.chunk_capacity, a.count);
  const std::uint64_t size = min(s.begin + a.chunk_capacity, a.count) - s.begin;
  constexpr std::uint64_t kPerVector = kVectorBytes / sizeof(T);
  const std::uint64_t sliced = by_capacity ? a.chunk_capacity : size;
  const std::uint64_t vectors = (sliced + kPerVector - 1) / kPerVector;
  const std::uint64_t per_block = (vectors + gridDim.x - 1) / gridDim.x * kPerVector;
  s.lo = min(static_cast<std::uint64_t>(blockIdx.x) * per_block, size);
  s.hi = min(s.lo + per_block, size);
  return s;
}

template <typename T>
__device__ BlockSlice sliceOf(const LaunchArgs& a, int chunk) {
  return sliceBy<T>(a, chunk, false);
}

__device__ unsigned char* scratchOf(const LaunchArgs& a, int rank, int slot) {
  return a.peers->scratch[rank] + a.scratch_offset + static_cast<std::uint64_t>(slot) * a.slot_bytes;
}

__device__ const unsigned char* inputOf(const LaunchArgs& a) { return static_cast<const unsigned char*>(a.send); }
__device__ unsigned char* outputOf(const LaunchArgs& a) { return static_cast<unsigned char*>(a.recv); }

// Block slice `s` of the send buffer's chunk at `input_chunk` into `dst_chunk` (scratch: the chunk's start):
// the plan's copy of kInput, premultiplied under a floating avg (copyFromSend) as the interpreter does it.
template <typename T>
__device__ void publishSlice(const LaunchArgs& a, unsigned char* dst_chunk, const unsigned char* input_chunk,
                             const BlockSlice& s) {
  copyFromSend<T>(a, reinterpret_cast<T*>(dst_chunk + s.lo * sizeof(T)),
                  reinterpret_cast<const T*>(input_chunk + s.lo * sizeof(T)), s.hi - s.lo);
}

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

// Push two-shot: the two-shot program with every transfer between ranks a write into the peer's memory
// (posted over the link) instead of a read of it (a round trip per load), for large operations.
// Scratch slot q of rank r first holds rank q's input for chunk r (the reduce reads it locally), then,
// once r has consumed it, chunk q's result from its owner q (the gather copies it locally). The fold
// is the plan's, in rank order, so the bits are the plan's: under a floating avg the scattered input is
// premultiplied as the plan's published copy is, and so is r's own term, read from its send buffer.
// Slots 0..n-1 only: within the plan's.
//
// Signals go on kPushFlag, a counter no plan uses, four per operation from each peer's block b:
// entered (its memory is free: its entry fence passed, its earlier operations are over), ready (its
// input for my chunk is in my slot), consumed (it read its slots, so results may overwrite them),
// result (its chunk's result is in my slot). Each block advances its own bases by four, so fused,
// pushed and interpreted operations can follow one another. Slices are fixed by the chunk capacity,
// not each chunk's size, so block b's slices of different chunks in one slot never overlap another
// block's.
constexpr int kPushFlag = kMaxDeviceFlags - 1;
constexpr std::uint64_t kPushSignals = 4;

template <typename T>
__device__ BlockSlice capacitySliceOf(const LaunchArgs& a, int chunk) {
  return sliceBy<T>(a, chunk, true);
}

// Waits for the `nth` kPushFlag signal of this operation from `peer`'s block of this index.
__device__ bool waitForPush(const LaunchArgs& a, int peer, std::uint64_t nth, std::uint64_t step) {
  const std::uint32_t index = counterIndex(peer, kPushFlag, static_cast<int>(blockIdx.x));
  return waitFor(a, a.peers->counters[a.rank] + index, a.control->base[index] + nth, step, peer);
}

template <typename T>
__device__ void copyChunkSlice(unsigned char* dst, const unsigned char* src, const BlockSlice& s) {
  if (s.hi > s.lo) copySlice(dst + s.lo * sizeof(T), src + s.lo * sizeof(T), (s.hi - s.lo) * sizeof(T));
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads) pushTwoShotKernel(LaunchArgs a) {
  enterKernel();
  if (!passEntryFence(a, a.peers->counters[a.rank])) return;
  const int n = a.world_size;
  const int r = a.rank;
  signalEveryPeer(a, kPushFlag);  // entered
  // Scatter: my input's chunk c into rank c's slot r, once rank c entered.
  for (int k = 1; k < n; ++k) {
    const int c = (r + k) % n;
    if (!waitForPush(a, c, 1, kFenceStep)) return;
    const BlockSlice s = capacitySliceOf<T>(a, c);
    if (s.hi > s.lo) publishSlice<T>(a, scratchOf(a, c, r), inputOf(a) + s.begin * sizeof(T), s);
  }
  signalEveryPeer(a, kPushFlag);  // ready: fenced, so my writes are visible before it
  // Reduce my chunk, in rank order, from my input and my slots (all local reads).
  std::uint64_t step = a.ready_wait_step;
  for (int q = 0; q < n; ++q) {
    if (q != r && !waitForPush(a, q, 2, step++)) return;
  }
  const BlockSlice mine = capacitySliceOf<T>(a, r);
  {
    __shared__ T* sources[kMaxRanks];
    __shared__ std::uint8_t from_send[kMaxRanks];  // this rank's own term is read from its send buffer
    __syncthreads();
    for (int q = static_cast<int>(threadIdx.x); q < n; q += static_cast<int>(blockDim.x)) {
      const unsigned char* base = q == r ? inputOf(a) + mine.begin * sizeof(T) : scratchOf(a, r, q);
      sources[q] = reinterpret_cast<T*>(const_cast<unsigned char*>(base) + mine.lo * sizeof(T));
      from_send[q] = q == r ? 1 : 0;
    }
    __syncthreads();
    if (mine.hi > mine.lo) {
      reduceSlice<T, Op>(reinterpret_cast<T*>(outputOf(a) + (mine.begin + mine.lo) * sizeof(T)), sources, n,
                         mine.hi - mine.lo, avgStep(a, true, from_send));
    }
  }
  signalEveryPeer(a, kPushFlag);  // consumed: fenced, so my reads of my slots are done before it
  // Push my chunk's result into every peer's slot r, once that peer consumed its slots.
  step = a.result_wait_step;
  for (int k = 1; k < n; ++k) {
    const int q = (r + k) % n;
    if (!waitForPush(a, q, 3, step + static_cast<std::uint64_t>(q < r ? q : q - 1))) return;
    copyChunkSlice<T>(scratchOf(a, q, r), outputOf(a) + mine.begin * sizeof(T), mine);
  }
  signalEveryPeer(a, kPushFlag);  // result
  // Gather: chunk q's result from my slot q into my output.
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    if (!waitForPush(a, q, 4, step++)) return;
    const BlockSlice s = capacitySliceOf<T>(a, q);
    copyChunkSlice<T>(outputOf(a) + s.begin * sizeof(T), scratchOf(a, r, q), s);
  }
  // This block's bases: only it reads and writes them, so no other block needs to finish first.
  __syncthreads();
  const int peer = static_cast<int>(threadIdx.x);
  if (peer < n && peer != r)
    a.control->base[counterIndex(peer, kPushFlag, static_cast<int>(blockIdx.x))] += kPushSignals;
}

template <typename T, typename Op>
hipError_t launchShape(const LaunchArgs& args, unsigned blocks, hipStream_t stream) {
  const bool overlap = args.overlap_launch != 0;
  if (args.fused == kFusedOneShot) {
    return launchKernel(oneShotKernel<T, Op>, blocks, kPlanKernelThreads, stream, overlap, args);
  }
  if (args.fused == kPushTwoShot) {
    return launchKernel(pushTwoShotKernel<T, Op>, blocks, kPlanKernelThreads, stream, overlap, args);
  }
  return launchKernel(twoShotKernel<T, Op>, blocks, kPlanKernelThreads, stream, overlap, args);
}

}  // namespace

// Every dtype x op through the one dispatch (dispatch.h); an unknown value is a launch error.
hipError_t launchFusedKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream) {
  return kernels::visitDataTypeAndOp(dtype, args.op, hipErrorInvalidValue, [&](auto type, auto reduce) {
    return launchShape<typename decltype(type)::type, typename decltype(reduce)::type>(args, blocks, stream);
  });
}

hipError_t loadFusedKernels() {
  return kernels::forEveryDataTypeAndOp(hipSuccess, [](auto type, auto reduce) {
    using T = typename decltype(type)::type;
    using Op = typename decltype(reduce)::type;
    for (const hipError_t e :
         {loadKernel(oneShotKernel<T, Op>), loadKernel(twoShotKernel<T, Op>), loadKernel(pushTwoShotKernel<T, Op>)}) {
      if (e != hipSuccess) return e;
    }
    return hipSuccess;
  });
}

int fusedKernelsPtxVersion() { return kernelPtxVersion(oneShotKernel<float, kernels::Sum>); }

}  // namespace peerreduce::gpu
