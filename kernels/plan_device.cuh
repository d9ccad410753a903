// Device code shared by the plan interpreter and the fused kernels: bounded waits on per-block
// counters, signals, the entry fence, the end of a launch, and the 16-byte copy and reduce loops that
// fold sources in the plan's order with the simulator's arithmetic (kernels/reduce_ops.h, avg's
// premultiplied send-buffer reads and integer division included).
// Included by the .cu files only; everything is internal to each kernel object.
#pragma once

#include "device_common.cuh"

namespace peerreduce::gpu {
namespace {

using kernels::BFloat16;
using kernels::Half;

constexpr int kMaxSources = kMaxRanks + 1;  // one-shot reads every rank; the tree adds its own input
constexpr int kDoneFlagId = 0;              // plan.h kDoneFlag

struct alignas(16) Vector {
  unsigned char bytes[kVectorBytes];
};
static_assert(sizeof(Bytes16) == sizeof(Vector), "16-byte loads and stores must match");

// This thread polls `counter` until it reaches `target`, then loads it once with acquire: that orders
// what follows after the writer's release (an acquire costs an L1 invalidation; a full system fence
// here would serialise across blocks). Bounded by the deadline, the abort word and another block's
// failure; on giving up it records the failure (naming `step` and `peer`) and returns false.
__device__ bool pollCounter(const LaunchArgs& a, const std::uint64_t* counter, std::uint64_t target, std::uint64_t step,
                            int peer) {
  const std::uint64_t start = globalTimerNs();
  std::uint64_t value = loadRelaxedSystem(counter);
  for (std::uint32_t polls = 1; value < target; ++polls) {
    const std::uint64_t code = pollVerdict(a, polls, start, a.timeout_ns);
    if (code != 0) {
      recordFailure(a, code, step, peer, value, target);
      return false;
    }
    pollPause();
    value = loadRelaxedSystem(counter);
  }
  (void)loadAcquireSystem(counter);
  return true;
}

// Thread 0 polls `counter` until it reaches `target`; every thread learns whether that happened. The
// verdict travels through the barrier itself (__syncthreads_and), not a shared variable: with a shared
// word, thread 0 could write the next wait's verdict while a slower thread still read this one's
// (compute-sanitizer racecheck reported it in programs with waits back to back).
__device__ bool waitFor(const LaunchArgs& a, const std::uint64_t* counter, std::uint64_t target, std::uint64_t step,
                        int peer) {
  const int ok = threadIdx.x == 0 ? (pollCounter(a, counter, target, step, peer) ? 1 : 0) : 1;
  return __syncthreads_and(ok) != 0;
}

// `fence_first`: the block wrote or read data since its last signal, so all its threads must be done
// and their accesses ordered before the signal: one barrier and one system-scope fence serve a run of
// consecutive signals, each of which is then a relaxed increment.
__device__ void signalPeer(const LaunchArgs& a, int peer, int flag, bool fence_first) {
  if (fence_first) __syncthreads();
  if (threadIdx.x == 0) {
    if (fence_first) fenceReleaseSystem();
    std::uint64_t* counter = a.peers->counters[peer] + counterIndex(a.rank, flag, static_cast<int>(blockIdx.x));
    if (a.peers->counters_in_host_memory[peer] != 0) {
      addSingleWriterSystem(counter, 1);
    } else {
      atomicAddRelaxedSystem(counter, 1);
    }
  }
}

// Vectors each thread keeps in flight per source: several independent 16-byte loads per thread hide
// the latency of remote (NVLink) reads, which one load at a time cannot.
constexpr int kUnroll = 4;

template <typename T, typename Op>
__device__ void reduceVectors(T* dst, T* const* srcs, int nsrc, std::uint64_t vectors, const kernels::AvgStep& avg) {
  constexpr int kPerVector = kVectorBytes / sizeof(T);
  using Acc = kernels::AccumulatorT<T>;
  const kernels::AvgArithmetic<T> arithmetic(avg);
  const std::uint64_t stride = static_cast<std::uint64_t>(blockDim.x) * kUnroll;
  for (std::uint64_t base = threadIdx.x; base < vectors; base += stride) {
    Acc acc[kUnroll][kPerVector];
    Bytes16 next[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint64_t v = base + static_cast<std::uint64_t>(u) * blockDim.x;
      if (v < vectors) next[u] = loadStreaming16(reinterpret_cast<const Vector*>(srcs[0]) + v);
    }
    // Software pipeline: the loads of source s+1 are in flight while source s is folded in.
    for (int s = 0; s < nsrc; ++s) {
      Bytes16 current[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) current[u] = next[u];
      if (s + 1 < nsrc) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const std::uint64_t v = base + static_cast<std::uint64_t>(u) * blockDim.x;
          if (v < vectors) next[u] = loadStreaming16(reinterpret_cast<const Vector*>(srcs[s + 1]) + v);
        }
      }
      const bool premultiply = arithmetic.premultiplies(s);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const T* elems = reinterpret_cast<const T*>(current[u].words);
#pragma unroll
        for (int e = 0; e < kPerVector; ++e) {
          const Acc value = arithmetic.widen(premultiply, elems[e]);
          acc[u][e] = s == 0 ? value : Op::apply(acc[u][e], value);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint64_t v = base + static_cast<std::uint64_t>(u) * blockDim.x;
      if (v >= vectors) continue;
      Vector out;
      T* outs = reinterpret_cast<T*>(out.bytes);
#pragma unroll
      for (int e = 0; e < kPerVector; ++e) outs[e] = arithmetic.result(acc[u][e]);
      reinterpret_cast<Vector*>(dst)[v] = out;
    }
  }
}

// dst <- fold(srcs) over `n` elements, reduce_ops.h's reduceElements with `avg`, split across the block.
template <typename T, typename Op>
__device__ void reduceSlice(T* dst, T* const* srcs, int nsrc, std::uint64_t n, const kernels::AvgStep& avg) {
  constexpr int kPerVector = kVectorBytes / sizeof(T);
  bool vectorizable = aligned(dst);
  for (int s = 0; s < nsrc; ++s) vectorizable = vectorizable && aligned(srcs[s]);
  std::uint64_t done = 0;
  if (vectorizable) {
    const std::uint64_t vectors = n / kPerVector;
    reduceVectors<T, Op>(dst, srcs, nsrc, vectors, avg);
    done = vectors * kPerVector;
  }
  const kernels::AvgArithmetic<T> arithmetic(avg);
  for (std::uint64_t i = done + threadIdx.x; i < n; i += blockDim.x) {
    kernels::AccumulatorT<T> acc = arithmetic.term(0, srcs[0][i]);
    for (int s = 1; s < nsrc; ++s) acc = Op::apply(acc, arithmetic.term(s, srcs[s][i]));
    dst[i] = arithmetic.result(acc);
  }
}

__device__ void copySlice(unsigned char* dst, const unsigned char* src, std::uint64_t bytes) {
  std::uint64_t done = 0;
  if (aligned(dst) && aligned(src)) {
    const std::uint64_t vectors = bytes / kVectorBytes;
    const std::uint64_t stride = static_cast<std::uint64_t>(blockDim.x) * kUnroll;
    for (std::uint64_t base = threadIdx.x; base < vectors; base += stride) {
      Bytes16 data[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::uint64_t v = base + static_cast<std::uint64_t>(u) * blockDim.x;
        if (v < vectors) data[u] = loadStreaming16(reinterpret_cast<const Vector*>(src) + v);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::uint64_t v = base + static_cast<std::uint64_t>(u) * blockDim.x;
        if (v < vectors) reinterpret_cast<Bytes16*>(dst)[v] = data[u];
      }
    }
    done = vectors * kVectorBytes;
  }
  for (std::uint64_t i = done + threadIdx.x; i < bytes; i += blockDim.x) dst[i] = src[i];
}

// Copies `n` elements out of the send buffer (a plan's copy of kInput, a fused kernel publishing its
// input). Under a floating avg every element is premultiplied on the way (reduce_ops.h), so the copy holds
// the very term every later reduction of it sums: a one-source reduction marked as read from the send buffer.
template <typename T>
__device__ void copyFromSend(const LaunchArgs& a, T* dst, const T* src, std::uint64_t n) {
  if (kernels::kAvgPremultiplies<T> && a.op == kOpAvg) {
    const std::uint8_t from_send = 1;
    T* const sources[1] = {const_cast<T*>(src)};
    reduceSlice<T, kernels::Sum>(dst, sources, 1, n, avgStep(a, false, &from_send));
    return;
  }
  copySlice(reinterpret_cast<unsigned char*>(dst), reinterpret_cast<const unsigned char*>(src), n * sizeof(T));
}

// Entry fence: every peer finished with this rank's memory in earlier operations. One thread per peer
// polls that peer's rank-level done counter, then fences so the peers' reads are ordered before every
// write this block makes.
__device__ bool passEntryFence(const LaunchArgs& a, const std::uint64_t* my_counters) {
  __shared__ int fence_ok;
  if (threadIdx.x == 0) fence_ok = 1;
  __syncthreads();
  const int peer = static_cast<int>(threadIdx.x);
  if (peer < a.world_size && peer != a.rank) {
    const std::uint32_t index = counterIndex(peer, kDoneFlagId, 0);
    if (!pollCounter(a, my_counters + index, a.control->base[index], kFenceStep, peer)) fence_ok = 0;
  }
  __syncthreads();
  return fence_ok != 0;
}

// The end of a launch: the last block to finish (all others have finished their accesses) sends the
// rank-level done signals and advances every base. (The push kernels end without it: their own signals
// order their writes, and each block advances its own bases.)
[[maybe_unused]] __device__ void finishLaunch(const LaunchArgs& a) {
  __shared__ int last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();  // this block's accesses happen before its count is seen
    last = atomicAdd(&a.control->finished, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  if (threadIdx.x == 0) fenceReleaseSystem();  // every block's accesses before the done signals
  __syncthreads();
  const int peer = static_cast<int>(threadIdx.x);
  if (peer < a.world_size && peer != a.rank && a.done_to[peer] != 0) {
    std::uint64_t* counter = a.peers->counters[peer] + counterIndex(a.rank, kDoneFlagId, 0);
    if (a.peers->counters_in_host_memory[peer] != 0) {
      addSingleWriterSystem(counter, a.done_to[peer]);
    } else {
      atomicAddRelaxedSystem(counter, a.done_to[peer]);
    }
  }
  // Data flags: one counter per block. Done flags: one per rank (block 0 slot).
  const int blocks = static_cast<int>(gridDim.x);
  const int counters = a.world_size * kMaxDeviceFlags * blocks;
  for (int k = static_cast<int>(threadIdx.x); k < counters; k += static_cast<int>(blockDim.x)) {
    const int b = k % blocks;
    const int flag = (k / blocks) % kMaxDeviceFlags;
    const int writer = k / (blocks * kMaxDeviceFlags);
    if (flag == kDoneFlagId && b != 0) continue;
    a.control->base[counterIndex(writer, flag, b)] += a.signal_counts[writer * kMaxDeviceFlags + flag];
  }
  if (threadIdx.x == 0) a.control->finished = 0;
  __threadfence();
}

}  // namespace
}  // namespace peerreduce::gpu
