// Device code of the low-latency (line) kernels: lines, their slots, bounded waits on them, the
// operation's epoch, parity and flag, and the avg arithmetic of a fold. Shared by the allreduce line
// kernels (kernels/line_kernels.cu) and those of reduce-scatter, all-gather and broadcast
// (kernels/collective_line_kernels.cu), which follow one protocol on one set of receive lines and one
// epoch per stream, so their operations can follow one another on a communicator.
//
// Lines. A line is 16 bytes: {data word 0, flag, data word 1, flag}, written and read as one 16-byte
// access in which each 8-byte half is single-copy atomic, so a half whose flag matches holds its data.
// Vector v (16 input bytes) travels as two lines, line v of the first half of its region and line v of
// the second half (LineSlot: a warp's stores then fill whole 128-byte segments). A rank's receive lines are
// [parity][writer][line_capacity bytes]; operation e uses parity e % 2 and flag e % (2^32 - 1) + 1
// (never 0, which zeroed lines hold), where e counts this stream's low-latency operations
// (ControlBlock::line_epoch, a copy per block index, all advanced by every launch, so graph replays
// advance it).
//
// Reuse. Every line kernel keeps one rule: a rank finishes an operation only after some line of that
// operation arrived from every peer (data or, where a peer has nothing to send, a presence line). Then
// writer w writes parity p in operation e+2 only after finishing operation e+1, which needed a line of
// e+1 from every peer; a peer writes those only after finishing operation e (stream order), so by then
// it has read everything parity p held. No buffer is written before its reader is done with it, without
// any done signal.
// Included by the .cu files only; everything is internal to each kernel object.
#pragma once

#include "device_common.cuh"

namespace peerreduce::gpu {
namespace {

constexpr std::uint64_t kLineBytes = 16;
// Polls of a line before the waiting thread starts pausing between polls (a small operation's data
// arrives within about this many: a local L2 poll takes a few hundred nanoseconds).
constexpr std::uint32_t kBusyPolls = 16;

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

// Where vector i of a region of `region_bytes` line bytes travels: its first line in the region's
// first half, its second line in the second half. So the 32 threads of a warp, pushing 32 consecutive
// vectors, write 512 contiguous bytes with each store (whole 128-byte segments over the link), where
// adjacent lines would have left every other 16 bytes of each segment to a second store.
struct LineSlot {
  unsigned char* first;
  unsigned char* second;
};

__device__ LineSlot slotOf(unsigned char* region, std::uint64_t region_bytes, std::uint64_t i) {
  return LineSlot{region + i * kLineBytes, region + region_bytes / 2 + i * kLineBytes};
}

// Waits until both lines of a vector carry `flag`, then returns its 16 data bytes in `value`; gives up
// `timeout_ns` after it began.
__device__ bool awaitVector(const LaunchArgs& a, const LineSlot& lines, std::uint32_t flag, std::uint64_t step,
                            int peer, std::uint64_t timeout_ns, Bytes16& value) {
  std::uint64_t start = 0;
  // Bounded: ends by the deadline, the abort word, or another block's failure.
  for (std::uint32_t polls = 0;; ++polls) {
    const Bytes16 low = loadLine16(lines.first);
    const Bytes16 high = loadLine16(lines.second);
    if (low.words[1] == flag && low.words[3] == flag && high.words[1] == flag && high.words[3] == flag) {
      value = Bytes16{{low.words[0], low.words[2], high.words[0], high.words[2]}};
      return true;
    }
    if (polls == 0) {
      start = globalTimerNs();
      continue;
    }
    // After the first kBusyPolls, yield between polls: thousands of threads spinning on lines that
    // peers are still writing compete with those very writes for the memory system.
    if (polls >= kBusyPolls) pollPause();
    const std::uint64_t code = pollVerdict(a, polls, start, timeout_ns);
    if (code != 0) {
      const std::uint32_t seen =
          low.words[1] != flag ? low.words[1] : (low.words[3] != flag ? low.words[3] : high.words[1]);
      recordFailure(a, code, step, peer, seen, flag);
      return false;
    }
  }
}

// Advances this block's copies of the epoch (ControlBlock::line_epoch), once every thread of the block
// is done with the operation (and so with its reads of copy blockIdx.x). A block that failed leaves
// them: the launch's failed flag stays set, so every later wait of the communicator gives up, and it is
// unusable until aborted and replaced.
__device__ void finishLowLatency(const LaunchArgs& a, bool ok, std::uint32_t epoch) {
  if (__syncthreads_and(ok ? 1 : 0) == 0) return;
  for (std::uint32_t k = blockIdx.x + threadIdx.x * gridDim.x; k < static_cast<std::uint32_t>(kMaxBlocks);
       k += blockDim.x * gridDim.x) {
    a.control->line_epoch[k] = epoch + 1;
  }
}

// Folds one more rank's vector into the accumulators (rank order: `first` for rank 0).
template <typename T, typename Op>
__device__ void foldVector(kernels::AccumulatorT<T> (&acc)[kVectorBytes / sizeof(T)], const Bytes16& value,
                           bool first) {
  const T* elems = reinterpret_cast<const T*>(value.words);
#pragma unroll
  for (int e = 0; e < static_cast<int>(kVectorBytes / sizeof(T)); ++e) {
    const kernels::AccumulatorT<T> x = kernels::loadElement<T>(elems[e]);
    acc[e] = first ? x : Op::apply(acc[e], x);
  }
}

// avg in the line kernels, made once per launch (a floating avg's reciprocal costs a division): this
// rank's input vectors premultiplied as they are read (sendVector), each fold's result divided for an
// integer avg (finishVector: the fold is the chunk's final reduction).
template <typename T>
__device__ kernels::AvgArithmetic<T> lineAvg(const LaunchArgs& a) {
  return kernels::AvgArithmetic<T>(avgStep(a, true, nullptr));
}

// The folded vector as stored.
template <typename T>
__device__ Bytes16 finishVector(const kernels::AvgArithmetic<T>& avg,
                                const kernels::AccumulatorT<T> (&acc)[kVectorBytes / sizeof(T)]) {
  Bytes16 result;
  T* outs = reinterpret_cast<T*>(result.words);
#pragma unroll
  for (int e = 0; e < static_cast<int>(kVectorBytes / sizeof(T)); ++e) outs[e] = avg.result(acc[e]);
  return result;
}

// A vector of the send buffer as it travels and is folded: under a floating avg every element
// premultiplied (reduce_ops.h), as the one-shot and two-shot plans' copies of kInput do; unchanged
// otherwise. The zero padding past a buffer's end stays zero.
template <typename T>
__device__ Bytes16 sendVector(const LaunchArgs& a, const kernels::AvgArithmetic<T>& avg, const Bytes16& input) {
  if (!kernels::kAvgPremultiplies<T> || a.op != kOpAvg) return input;
  Bytes16 out = input;
  T* elems = reinterpret_cast<T*>(out.words);
#pragma unroll
  for (int e = 0; e < static_cast<int>(kVectorBytes / sizeof(T)); ++e) elems[e] = avg.scaled(elems[e]);
  return out;
}

// Stores a vector as its two lines.
__device__ void pushVector(const LineSlot& lines, const Bytes16& value, std::uint32_t flag) {
  storeLine16(lines.first, Bytes16{{value.words[0], flag, value.words[1], flag}});
  storeLine16(lines.second, Bytes16{{value.words[2], flag, value.words[3], flag}});
}

// Where this operation's lines from `writer` start in `holder`'s receive area.
__device__ unsigned char* linesOf(const LaunchArgs& a, int holder, int writer, std::uint64_t parity) {
  return a.peers->lines[holder] + (parity * static_cast<std::uint64_t>(a.world_size) + writer) * a.line_capacity;
}

struct LineOperation {
  std::uint32_t epoch;
  std::uint32_t flag;
  std::uint64_t parity;
  std::uint64_t bytes;
  std::uint64_t vectors;
  std::uint64_t first;   // this thread's first vector
  std::uint64_t stride;  // threads in the grid
};

template <typename T>
__device__ LineOperation lineOperation(const LaunchArgs& a) {
  LineOperation op;
  op.epoch = a.control->line_epoch[blockIdx.x];
  op.flag = lineFlag(op.epoch);
  op.parity = op.epoch & 1u;
  op.bytes = a.count * sizeof(T);
  op.vectors = (op.bytes + kVectorBytes - 1) / kVectorBytes;
  op.first = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  op.stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  return op;
}

// A vector's result: every rank's term folded in rank order, this rank's `own` (its input's vector as sent),
// the others' from vector i of their region (at `region_offset`, `region_bytes` long) of this rank's
// receive lines. False when a wait gave up.
template <typename T, typename Op>
__device__ bool receiveAndFold(const LaunchArgs& a, const kernels::AvgArithmetic<T>& avg, const LineOperation& op,
                               const Bytes16& own, std::uint64_t region_offset, std::uint64_t region_bytes,
                               std::uint64_t i, Bytes16& result) {
  kernels::AccumulatorT<T> acc[kVectorBytes / sizeof(T)];
  std::uint32_t step = a.ready_wait_step;
  for (int q = 0; q < a.world_size; ++q) {
    Bytes16 value = own;
    if (q != a.rank && !awaitVector(a, slotOf(linesOf(a, a.rank, q, op.parity) + region_offset, region_bytes, i),
                                    op.flag, step++, q, a.timeout_ns, value)) {
      return false;
    }
    foldVector<T, Op>(acc, value, q == 0);
  }
  result = finishVector<T>(avg, acc);
  return true;
}

}  // namespace
}  // namespace peerreduce::gpu
