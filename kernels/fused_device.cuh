// Device helpers of the fused kernels (kernels/fused_kernels.cuh: the pulling one-shot and two-shot;
// kernels/push_kernels.cuh: the pushing ones): block slices of a chunk sliced as the interpreter slices a
// data step, the scratch and user buffers of the launch, publishing a slice of the send buffer, and
// signalling every peer. Header-only, in each file's own anonymous namespace.
#pragma once

#include "device_plan.h"
#include "plan_device.cuh"
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

}  // namespace
}  // namespace peerreduce::gpu
