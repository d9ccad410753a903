// The low-latency kernels: the one-shot and two-shot programs for small and mid-sized operations, with
// the data pushed to peers in flagged lines instead of published in scratch and pulled after a signal.
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
// Vector v (16 input bytes) travels as two lines, line v of the first half of its region and line v of
// the second half (LineSlot: a warp's stores then fill whole 128-byte segments). A rank's receive lines are
// [parity][writer][line_capacity bytes]; operation e uses parity e % 2 and flag e % (2^32 - 1) + 1
// (never 0, which zeroed lines hold), where e counts this stream's low-latency operations
// (ControlBlock::line_epoch, a copy per block index, all advanced by every launch, so graph replays
// advance it).
//
// Reuse. Writer w writes parity p in operation e+2 only after finishing operation e+1, which needed
// every peer's lines of e+1; a peer writes those only after finishing operation e (stream order), so
// by then it has read everything parity p held. No buffer is written before its reader is done with
// it, without any done signal.
//
// Two-shot. Vectors are split evenly into n owner ranges (range q: [q V / n, (q+1) V / n), every range
// non-empty: the host asks for V >= n). Each rank pushes range q of its input to owner q's scatter
// lines; the owner folds its range in rank order, writes it to its output and pushes the result to
// every peer's gather lines; every rank copies the other ranges from its gather lines. A writer's
// lines are [scatter: capacity/2][gather: capacity/2], offsets relative to the range's start. The
// reuse argument above holds: finishing an operation needs every owner's gather lines, and an owner
// writes them only after every rank's scatter lines of that operation arrived.
//
// Results. Every rank folds the n inputs of each element in rank order with kernels/reduce_ops.h, as
// the one-shot and two-shot plans' reduce steps do, so results equal the simulator's bits (how the
// vectors are split among owners does not change any element's fold). Under a floating avg a rank
// premultiplies its input as it reads it (sendVector), before pushing or folding it, where the plans
// premultiply their copies of the send buffer: the same terms. Every wait is bounded
// by the abort word, another block's failure and the deadline; a failure is reported like a plan
// wait's (the step of the ready wait for that peer) and the kernel returns.
#include "device_common.cuh"
#include "dispatch.h"
#include "plan_kernel_launch.h"

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
__device__ bool awaitVector(const LaunchArgs& a, const LineSlot& lines, std::uint32_t flag, std::uint32_t step,
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

// Where a one-shot's vectors are read and written: the operation's own buffers...
struct WholeBuffers {
  const unsigned char* input;
  unsigned char* output;
  std::uint64_t bytes;
  __device__ Bytes16 load(std::uint64_t v) const { return loadInputVector(input, v, bytes); }
  __device__ void store(std::uint64_t v, const Bytes16& value) const { storeOutputVector(output, v, bytes, value); }
};

// ... or the buffers of a batch, each owning a run of the operation's vectors (device_plan.h).
struct BatchBuffers {
  const BatchTable* table;
  // The item owning vector v: the last whose first vector is <= v (the first item starts at 0; the
  // host leaves out empty items, so first vectors increase strictly).
  __device__ const BatchTableItem& itemOf(std::uint64_t v) const {
    std::uint32_t lo = 0;
    std::uint32_t hi = table->items;
    while (hi - lo > 1) {  // at most log2(kMaxBatchTableItems) rounds
      const std::uint32_t mid = (lo + hi) / 2;
      if (table->item[mid].first_vector <= v) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return table->item[lo];
  }
  __device__ Bytes16 load(std::uint64_t v) const {
    const BatchTableItem& it = itemOf(v);
    return loadInputVector(static_cast<const unsigned char*>(it.send), v - it.first_vector, it.bytes);
  }
  __device__ void store(std::uint64_t v, const Bytes16& value) const {
    const BatchTableItem& it = itemOf(v);
    storeOutputVector(static_cast<unsigned char*>(it.recv), v - it.first_vector, it.bytes, value);
  }
};

template <typename T, typename Op, typename Buffers>
__device__ void oneShotLines(const LaunchArgs& a, const Buffers& io) {
  const LineOperation op = lineOperation<T>(a);
  const kernels::AvgArithmetic<T> avg = lineAvg<T>(a);
  const int n = a.world_size;

  // Push: this rank's input into every peer's lines for writer `rank`, each rank starting with a
  // different peer so the links fill evenly.
  for (std::uint64_t v = op.first; v < op.vectors; v += op.stride) {
    const Bytes16 mine = sendVector<T>(a, avg, io.load(v));
    for (int k = 1; k < n; ++k) {
      const int q = (a.rank + k) % n;
      pushVector(slotOf(linesOf(a, q, a.rank, op.parity), a.line_capacity, v), mine, op.flag);
    }
  }

  // Receive and fold in rank order; this rank's own term comes from its input (same thread, same
  // vector as above, so an in-place output is written only after it was read).
  bool ok = true;
  for (std::uint64_t v = op.first; ok && v < op.vectors; v += op.stride) {
    Bytes16 result;
    ok = receiveAndFold<T, Op>(a, avg, op, sendVector<T>(a, avg, io.load(v)), 0, a.line_capacity, v, result);
    if (ok) io.store(v, result);
  }
  finishLowLatency(a, ok, op.epoch);
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads) lowLatencyOneShotKernel(LaunchArgs a) {
  enterKernel();
  oneShotLines<T, Op>(a, WholeBuffers{static_cast<const unsigned char*>(a.send), static_cast<unsigned char*>(a.recv),
                                      a.count * sizeof(T)});
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads)
    batchedOneShotKernel(LaunchArgs a, const PR_GRID_CONSTANT BatchTable table) {
  enterKernel();
  oneShotLines<T, Op>(a, BatchBuffers{&table});
}

// Owner ranges of the two-shot: range q is [rangeStart(q), rangeStart(q + 1)).
__device__ std::uint64_t rangeStart(std::uint64_t vectors, int q, int n) {
  return vectors * static_cast<std::uint64_t>(q) / static_cast<std::uint64_t>(n);
}

__device__ int ownerOf(std::uint64_t vectors, std::uint64_t v, int n) {
  // The largest q with rangeStart(q) <= v: start from the proportional guess and correct it.
  int q = static_cast<int>(v * static_cast<std::uint64_t>(n) / vectors);
  while (q + 1 < n && rangeStart(vectors, q + 1, n) <= v) ++q;
  while (q > 0 && rangeStart(vectors, q, n) > v) --q;
  return q;
}

template <typename T, typename Op, typename Buffers>
__device__ void twoShotLines(const LaunchArgs& a, const Buffers& io) {
  const LineOperation op = lineOperation<T>(a);
  const kernels::AvgArithmetic<T> avg = lineAvg<T>(a);
  const int n = a.world_size;
  // A writer's lines: [scatter region][gather region], each half the capacity.
  const std::uint64_t half = a.line_capacity / 2;
  const std::uint64_t mine_begin = rangeStart(op.vectors, a.rank, n);
  const std::uint64_t mine_end = rangeStart(op.vectors, a.rank + 1, n);

  // Scatter: every other owner's range of this rank's input into that owner's scatter lines.
  for (std::uint64_t v = op.first; v < op.vectors; v += op.stride) {
    const int q = ownerOf(op.vectors, v, n);
    if (q == a.rank) continue;
    const std::uint64_t i = v - rangeStart(op.vectors, q, n);
    pushVector(slotOf(linesOf(a, q, a.rank, op.parity), half, i), sendVector<T>(a, avg, io.load(v)), op.flag);
  }

  // Reduce this rank's range in rank order; write it and push it to every peer's gather lines.
  bool ok = true;
  for (std::uint64_t v = mine_begin + op.first; ok && v < mine_end; v += op.stride) {
    const std::uint64_t i = v - mine_begin;
    Bytes16 result;
    ok = receiveAndFold<T, Op>(a, avg, op, sendVector<T>(a, avg, io.load(v)), 0, half, i, result);
    if (!ok) break;
    io.store(v, result);
    for (int k = 1; k < n; ++k) {
      const int q = (a.rank + k) % n;
      pushVector(slotOf(linesOf(a, q, a.rank, op.parity) + half, half, i), result, op.flag);
    }
  }

  // Gather: every other range from its owner's gather lines (same thread and vector as the scatter,
  // so an in-place output is written only after this thread read the input there). These waits get
  // half as long again: an owner's gather lines stop when some rank's scatter lines stop, and the
  // wait for that rank (in the reduce above, begun microseconds later at most) must time out first, so
  // the error names the rank that stalled rather than the owner waiting for it.
  for (std::uint64_t v = op.first; ok && v < op.vectors; v += op.stride) {
    const int q = ownerOf(op.vectors, v, n);
    if (q == a.rank) continue;
    const std::uint64_t i = v - rangeStart(op.vectors, q, n);
    Bytes16 value{{0, 0, 0, 0}};
    const std::uint32_t step = a.result_wait_step + static_cast<std::uint32_t>(q < a.rank ? q : q - 1);
    ok = awaitVector(a, slotOf(linesOf(a, a.rank, q, op.parity) + half, half, i), op.flag, step, q,
                     a.timeout_ns + a.timeout_ns / 2, value);
    if (ok) io.store(v, value);
  }
  finishLowLatency(a, ok, op.epoch);
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads) lowLatencyTwoShotKernel(LaunchArgs a) {
  enterKernel();
  twoShotLines<T, Op>(a, WholeBuffers{static_cast<const unsigned char*>(a.send), static_cast<unsigned char*>(a.recv),
                                      a.count * sizeof(T)});
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads)
    batchedTwoShotKernel(LaunchArgs a, const PR_GRID_CONSTANT BatchTable table) {
  enterKernel();
  twoShotLines<T, Op>(a, BatchBuffers{&table});
}

template <typename T, typename Op>
hipError_t launchShape(const LaunchArgs& args, const BatchTable* table, unsigned blocks, hipStream_t stream) {
  const bool overlap = args.overlap_launch != 0;
  if (table != nullptr && args.fused == kLowLatencyTwoShot) {
    return launchKernel(batchedTwoShotKernel<T, Op>, blocks, kPlanKernelThreads, stream, overlap, args, *table);
  }
  if (table != nullptr) {
    return launchKernel(batchedOneShotKernel<T, Op>, blocks, kPlanKernelThreads, stream, overlap, args, *table);
  }
  if (args.fused == kLowLatencyTwoShot) {
    return launchKernel(lowLatencyTwoShotKernel<T, Op>, blocks, kPlanKernelThreads, stream, overlap, args);
  }
  return launchKernel(lowLatencyOneShotKernel<T, Op>, blocks, kPlanKernelThreads, stream, overlap, args);
}

// Every dtype x op through the one dispatch (dispatch.h); an unknown value is a launch error.
hipError_t launchLines(const LaunchArgs& args, const BatchTable* table, int dtype, unsigned blocks,
                       hipStream_t stream) {
  return kernels::visitDataTypeAndOp(dtype, args.op, hipErrorInvalidValue, [&](auto type, auto reduce) {
    return launchShape<typename decltype(type)::type, typename decltype(reduce)::type>(args, table, blocks, stream);
  });
}

}  // namespace

hipError_t launchLowLatencyKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream) {
  return launchLines(args, nullptr, dtype, blocks, stream);
}

hipError_t launchBatchedLowLatencyKernel(const LaunchArgs& args, const BatchTable& table, int dtype, unsigned blocks,
                                         hipStream_t stream) {
  return launchLines(args, &table, dtype, blocks, stream);
}

hipError_t loadLineKernels() {
  return kernels::forEveryDataTypeAndOp(hipSuccess, [](auto type, auto reduce) {
    using T = typename decltype(type)::type;
    using Op = typename decltype(reduce)::type;
    for (const hipError_t e : {loadKernel(lowLatencyOneShotKernel<T, Op>), loadKernel(batchedOneShotKernel<T, Op>),
                               loadKernel(lowLatencyTwoShotKernel<T, Op>), loadKernel(batchedTwoShotKernel<T, Op>)}) {
      if (e != hipSuccess) return e;
    }
    return hipSuccess;
  });
}

int lineKernelsPtxVersion() { return kernelPtxVersion(lowLatencyOneShotKernel<float, kernels::Sum>); }

}  // namespace peerreduce::gpu
