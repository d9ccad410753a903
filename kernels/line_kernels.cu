// The low-latency one-shot kernel: the one-shot program for small operations, with the data pushed to
// every peer in flagged lines instead of published in scratch and pulled after a signal.
//
// Why. A one-shot through scratch pays, per operation, a barrier and a system-scope fence before each
// signal, a remote counter increment, a poll, and then remote reads (a round trip over the link per
// load). Here each rank writes its input straight into every peer's receive lines with plain stores
// that carry the operation's flag beside the data, so a reader knows data has arrived from the data
// itself: no fence, no separate signal, no remote read; the critical path is one posted write per
// link and a local poll.
//
// Lines. A line is 16 bytes: {data word 0, flag, data word 1, flag}, written and read as one 16-byte
// access in which each 8-byte half is single-copy atomic, so a half whose flag matches holds its data.
// Vector v (16 input bytes) travels as lines 2v and 2v+1. A rank's receive lines are
// [parity][writer][line_capacity bytes]; operation e uses parity e % 2 and flag e % (2^32 - 1) + 1
// (never 0, which zeroed lines hold), where e counts this stream's low-latency operations
// (ControlBlock::line_epoch, advanced by the last block of each launch, so graph replays advance it).
//
// Reuse. Writer w writes parity p in operation e+2 only after finishing operation e+1, which needed
// every peer's lines of e+1; a peer writes those only after finishing operation e (stream order), so
// by then it has read everything parity p held. No buffer is written before its reader is done with
// it, without any done signal.
//
// Results. Every rank folds the n inputs of each element in rank order with kernels/reduce_ops.h, as
// the one-shot plan's reduce step does, so results equal the simulator's bits. Every wait is bounded
// by the abort word, another block's failure and the deadline; a failure is reported like a plan
// wait's (the step of the ready wait for that peer) and the kernel returns.
#include "device_common.cuh"
#include "plan_kernel_launch.h"

namespace peerreduce::gpu {
namespace {

constexpr std::uint64_t kLinesPerVector = 2;
constexpr std::uint64_t kLineBytes = 16;

__device__ std::uint32_t lineFlag(std::uint32_t epoch) { return epoch % 0xffffffffu + 1u; }

// Input vector v of a buffer of `bytes` bytes: one 16-byte load when whole and aligned, else byte by
// byte, zero-padded past the end (user buffers need only element alignment).
__device__ Bytes16 loadInputVector(const unsigned char* base, std::uint64_t v, std::uint64_t bytes) {
  const std::uint64_t offset = v * kVectorBytes;
  const unsigned char* p = base + offset;
  if (offset + kVectorBytes <= bytes && aligned(p)) return loadStreaming16(p);
  Bytes16 out{{0, 0, 0, 0}};
  auto* o = reinterpret_cast<unsigned char*>(out.words);
  const std::uint64_t n = min(static_cast<std::uint64_t>(kVectorBytes), bytes - offset);
  for (std::uint64_t i = 0; i < n; ++i) o[i] = p[i];
  return out;
}

__device__ void storeOutputVector(unsigned char* base, std::uint64_t v, std::uint64_t bytes, const Bytes16& value) {
  const std::uint64_t offset = v * kVectorBytes;
  unsigned char* p = base + offset;
  if (offset + kVectorBytes <= bytes && aligned(p)) {
    *reinterpret_cast<Bytes16*>(p) = value;
    return;
  }
  const auto* in = reinterpret_cast<const unsigned char*>(value.words);
  const std::uint64_t n = min(static_cast<std::uint64_t>(kVectorBytes), bytes - offset);
  for (std::uint64_t i = 0; i < n; ++i) p[i] = in[i];
}

// Waits until both lines of a vector carry `flag`, then returns its 16 data bytes in `value`.
__device__ bool awaitVector(const LaunchArgs& a, const unsigned char* lines, std::uint32_t flag, std::uint32_t step,
                            int peer, Bytes16& value) {
  std::uint64_t start = 0;
  // Bounded: ends by the deadline, the abort word, or another block's failure.
  for (std::uint32_t polls = 0;; ++polls) {
    const Bytes16 low = loadLine16(lines);
    const Bytes16 high = loadLine16(lines + kLineBytes);
    if (low.words[1] == flag && low.words[3] == flag && high.words[1] == flag && high.words[3] == flag) {
      value = Bytes16{{low.words[0], low.words[2], high.words[0], high.words[2]}};
      return true;
    }
    if (polls == 0) {
      start = globalTimerNs();
      continue;
    }
    const std::uint64_t code = pollVerdict(a, polls, start);
    if (code != 0) {
      const std::uint32_t seen = low.words[1] != flag ? low.words[1] : (low.words[3] != flag ? low.words[3] : high.words[1]);
      recordFailure(a, code, step, peer, seen, flag);
      return false;
    }
  }
}

// The last block to finish advances the epoch; a launch with a failed block leaves it (the
// communicator is unusable after a failure until it is aborted and replaced).
__device__ void finishLowLatency(const LaunchArgs& a, bool ok, std::uint32_t epoch) {
  __shared__ int last;
  if (__syncthreads_and(ok ? 1 : 0) == 0) return;
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(&a.control->finished, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    a.control->line_epoch = epoch + 1;
    a.control->finished = 0;
    __threadfence();
  }
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads) lowLatencyOneShotKernel(LaunchArgs a) {
  constexpr int kPerVector = kVectorBytes / sizeof(T);
  using Acc = kernels::AccumulatorT<T>;
  const std::uint32_t epoch = a.control->line_epoch;
  const std::uint32_t flag = lineFlag(epoch);
  const std::uint64_t parity = epoch & 1u;
  const std::uint64_t bytes = a.count * sizeof(T);
  const std::uint64_t vectors = (bytes + kVectorBytes - 1) / kVectorBytes;
  const std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const auto* input = static_cast<const unsigned char*>(a.send);
  auto* output = static_cast<unsigned char*>(a.recv);
  const int n = a.world_size;

  // Push: this rank's input into every peer's lines for writer `rank`, each rank starting with a
  // different peer so the links fill evenly.
  const std::uint64_t my_writer_offset = (parity * static_cast<std::uint64_t>(n) + a.rank) * a.line_capacity;
  for (std::uint64_t v = first; v < vectors; v += stride) {
    const Bytes16 mine = loadInputVector(input, v, bytes);
    const Bytes16 low{{mine.words[0], flag, mine.words[1], flag}};
    const Bytes16 high{{mine.words[2], flag, mine.words[3], flag}};
    for (int k = 1; k < n; ++k) {
      const int q = (a.rank + k) % n;
      unsigned char* lines = a.peers->lines[q] + my_writer_offset + v * kLinesPerVector * kLineBytes;
      storeLine16(lines, low);
      storeLine16(lines + kLineBytes, high);
    }
  }

  // Receive and fold in rank order; this rank's own term comes from its input (same thread, same
  // vector as above, so an in-place output is written only after it was read).
  bool ok = true;
  const bool divide = a.op == kOpAvg;
  for (std::uint64_t v = first; ok && v < vectors; v += stride) {
    Acc acc[kPerVector];
    std::uint32_t step = a.ready_wait_step;
    for (int q = 0; q < n && ok; ++q) {
      Bytes16 value{{0, 0, 0, 0}};
      if (q == a.rank) {
        value = loadInputVector(input, v, bytes);
      } else {
        const unsigned char* lines = a.peers->lines[a.rank] +
                                     (parity * static_cast<std::uint64_t>(n) + q) * a.line_capacity +
                                     v * kLinesPerVector * kLineBytes;
        ok = awaitVector(a, lines, flag, step++, q, value);
      }
      const T* elems = reinterpret_cast<const T*>(value.words);
#pragma unroll
      for (int e = 0; e < kPerVector; ++e) {
        const Acc x = kernels::loadElement<T>(elems[e]);
        acc[e] = q == 0 ? x : Op::apply(acc[e], x);
      }
    }
    if (!ok) break;
    Bytes16 result;
    T* outs = reinterpret_cast<T*>(result.words);
#pragma unroll
    for (int e = 0; e < kPerVector; ++e) {
      outs[e] = kernels::storeElement<T>(divide ? kernels::finalizeAvg<T>(acc[e], n) : acc[e]);
    }
    storeOutputVector(output, v, bytes, result);
  }
  finishLowLatency(a, ok, epoch);
}

template <typename T>
hipError_t launchForType(const LaunchArgs& args, unsigned blocks, hipStream_t stream) {
  switch (args.op) {
    case 0: lowLatencyOneShotKernel<T, kernels::Sum><<<blocks, kPlanKernelThreads, 0, stream>>>(args); break;
    case 1: lowLatencyOneShotKernel<T, kernels::Prod><<<blocks, kPlanKernelThreads, 0, stream>>>(args); break;
    case 2: lowLatencyOneShotKernel<T, kernels::Min><<<blocks, kPlanKernelThreads, 0, stream>>>(args); break;
    case 3: lowLatencyOneShotKernel<T, kernels::Max><<<blocks, kPlanKernelThreads, 0, stream>>>(args); break;
    default: lowLatencyOneShotKernel<T, kernels::Sum><<<blocks, kPlanKernelThreads, 0, stream>>>(args); break;  // avg
  }
  return hipGetLastError();
}

}  // namespace

hipError_t launchLowLatencyKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream) {
  switch (dtype) {
    case 0: return launchForType<std::int8_t>(args, blocks, stream);
    case 1: return launchForType<std::uint8_t>(args, blocks, stream);
    case 2: return launchForType<std::int32_t>(args, blocks, stream);
    case 3: return launchForType<std::uint32_t>(args, blocks, stream);
    case 4: return launchForType<std::int64_t>(args, blocks, stream);
    case 5: return launchForType<std::uint64_t>(args, blocks, stream);
    case 6: return launchForType<kernels::Half>(args, blocks, stream);
    case 7: return launchForType<kernels::BFloat16>(args, blocks, stream);
    case 8: return launchForType<float>(args, blocks, stream);
    default: return launchForType<double>(args, blocks, stream);
  }
}

}  // namespace peerreduce::gpu
