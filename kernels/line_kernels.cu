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
// Lines, their reuse rule and the helpers: kernels/line_device.cuh.
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
#include "dispatch.h"
#include "line_device.cuh"
#include "plan_kernel_launch.h"

namespace peerreduce::gpu {
namespace {

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
