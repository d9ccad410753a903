// The low-latency kernels of reduce-scatter, all-gather and broadcast: their direct (one-shot) plans for
// small blocks, with the data pushed into peers' receive lines (kernels/line_device.cuh) instead of
// published in scratch and pulled after a signal. The host runs them only where the plan is exactly
// the collective's direct plan (lib/gpu/fused_shape.h) and the block fits (lib/gpu/kernel_choice.h).
//
// Why. The plan interpreter runs those plans with one signal round: a barrier and a system-scope fence
// before each signal, a remote counter increment, a poll, then remote reads, a round trip over the link
// per load. Lines carry their own arrival flag: each writer's plain stores into the reader's memory are
// the whole exchange, and a reader polls its own memory.
//
// Blocks. `count` is one rank's block; a buffer holding every block has block b at b x its block
// stride (LaunchArgs::send_block_stride / recv_block_stride), a one-block buffer has stride 0. Vector v
// of a block travels in slot v of the writer's lines (two lines), pushed and received by the thread
// that owns v (v = blockIdx.x x blockDim.x + threadIdx.x, step the grid), on every rank alike.
//   reduce-scatter: rank r pushes block q of its input to rank q's lines (writer r); rank q folds block
//     q of every rank in rank order, its own term from its input, and writes its output;
//   all-gather: rank r pushes its input to every peer's lines (writer r) and copies it into its own
//     block of the output; it copies every peer q's block from its lines of writer q;
//   broadcast: the root pushes its input to every peer's lines (writer root) and copies it to its
//     output; every other rank copies its lines of writer root.
// Reuse (line_device.cuh): a rank finishes only after a line of the operation came from every peer.
// Reduce-scatter and all-gather receive data from every peer. In a broadcast only the root sends data,
// so every other rank also writes a presence line (slot 0 of its own writer region, which no broadcast
// data uses) into every peer, and block 0 of every rank waits for those before it finishes: the root
// cannot run two broadcasts ahead of a rank still reading, nor can one receiver of another.
//
// Results. The same terms and fold as the plans': under a floating avg every vector read from the send
// buffer is premultiplied (sendVector), as the plans' copies and reads of kInput are, and reduce-scatter
// folds in rank order with the finalising arithmetic of its one reduce step; the copying collectives
// move the bits as the interpreter's copies do. Every wait is bounded by the abort word, another block's
// failure and the deadline, and is reported as the plan's wait for that peer (a presence line as the
// entry fence's).
#include <type_traits>

#include "dispatch.h"
#include "line_device.cuh"
#include "plan_kernel_launch.h"

namespace peerreduce::gpu {
namespace {

// Block `block` of the send buffer and of the receive buffer (stride 0: the buffer holds one block).
template <typename T>
__device__ const unsigned char* sendBlock(const LaunchArgs& a, int block) {
  return static_cast<const unsigned char*>(a.send) +
         static_cast<std::uint64_t>(block) * a.send_block_stride * sizeof(T);
}
template <typename T>
__device__ unsigned char* recvBlock(const LaunchArgs& a, int block) {
  return static_cast<unsigned char*>(a.recv) + static_cast<std::uint64_t>(block) * a.recv_block_stride * sizeof(T);
}

// The plan's wait step for peer q (the direct plans wait for every peer in rank order, skipping self).
__device__ std::uint64_t waitStepFor(const LaunchArgs& a, int q) {
  return a.ready_wait_step + static_cast<std::uint64_t>(q < a.rank ? q : q - 1);
}

// Slot v of `writer`'s lines of this operation in `holder`'s receive area.
__device__ LineSlot slotFrom(const LaunchArgs& a, const LineOperation& op, int holder, int writer, std::uint64_t v) {
  return slotOf(linesOf(a, holder, writer, op.parity), a.line_capacity, v);
}

// This rank's (one-block) input pushed into every peer's lines, each rank starting with a different peer
// so the links fill evenly, and copied into `output` (in place the same memory, read and written by one
// thread: its bits stay).
template <typename T>
__device__ void publishToEveryPeer(const LaunchArgs& a, const LineOperation& op, const kernels::AvgArithmetic<T>& avg,
                                   unsigned char* output) {
  const int n = a.world_size;
  for (std::uint64_t v = op.first; v < op.vectors; v += op.stride) {
    const Bytes16 mine = sendVector<T>(a, avg, loadInputVector(sendBlock<T>(a, 0), v, op.bytes));
    for (int k = 1; k < n; ++k) pushVector(slotFrom(a, op, (a.rank + k) % n, a.rank, v), mine, op.flag);
    storeOutputVector(output, v, op.bytes, mine);
  }
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads) reduceScatterLinesKernel(LaunchArgs a) {
  enterKernel();
  const LineOperation op = lineOperation<T>(a);
  const kernels::AvgArithmetic<T> avg = lineAvg<T>(a);
  const int n = a.world_size;
  // Push: block q of this rank's input into rank q's lines, each rank starting with a different peer so
  // the links fill evenly. Block `rank` is not read here: an in-place output overlaps it.
  for (std::uint64_t v = op.first; v < op.vectors; v += op.stride) {
    for (int k = 1; k < n; ++k) {
      const int q = (a.rank + k) % n;
      const Bytes16 term = sendVector<T>(a, avg, loadInputVector(sendBlock<T>(a, q), v, op.bytes));
      pushVector(slotFrom(a, op, q, a.rank, v), term, op.flag);
    }
  }
  // Fold block `rank` of every rank in rank order; this rank's own term is read by the thread that then
  // writes that vector of the output, so an in-place output is written only after it was read.
  bool ok = true;
  for (std::uint64_t v = op.first; ok && v < op.vectors; v += op.stride) {
    const Bytes16 own = sendVector<T>(a, avg, loadInputVector(sendBlock<T>(a, a.rank), v, op.bytes));
    Bytes16 result;
    ok = receiveAndFold<T, Op>(a, avg, op, own, 0, a.line_capacity, v, result);
    if (ok) storeOutputVector(recvBlock<T>(a, 0), v, op.bytes, result);
  }
  finishLowLatency(a, ok, op.epoch);
}

// The copying collectives never fold: one kernel per element type serves every op (the op matters only
// to avg's premultiplied reads of the send buffer, decided at run time as the interpreter decides it).
template <typename T>
__global__ void __launch_bounds__(kPlanKernelThreads) allGatherLinesKernel(LaunchArgs a) {
  enterKernel();
  const LineOperation op = lineOperation<T>(a);
  const kernels::AvgArithmetic<T> avg = lineAvg<T>(a);
  const int n = a.world_size;
  publishToEveryPeer<T>(a, op, avg, recvBlock<T>(a, a.rank));
  // Every peer's block from its lines, in rank order.
  bool ok = true;
  for (std::uint64_t v = op.first; ok && v < op.vectors; v += op.stride) {
    for (int q = 0; ok && q < n; ++q) {
      if (q == a.rank) continue;
      Bytes16 value{{0, 0, 0, 0}};
      ok = awaitVector(a, slotFrom(a, op, a.rank, q, v), op.flag, waitStepFor(a, q), q, a.timeout_ns, value);
      if (ok) storeOutputVector(recvBlock<T>(a, q), v, op.bytes, value);
    }
  }
  finishLowLatency(a, ok, op.epoch);
}

template <typename T>
__global__ void __launch_bounds__(kPlanKernelThreads) broadcastLinesKernel(LaunchArgs a) {
  enterKernel();
  const LineOperation op = lineOperation<T>(a);
  const kernels::AvgArithmetic<T> avg = lineAvg<T>(a);
  const int n = a.world_size;
  const bool root = a.rank == a.root;
  const bool presence = blockIdx.x == 0;  // block 0 carries the presence lines (see the top)
  // Presence: a receiver tells every peer it entered this operation (it finished the previous one).
  if (presence && !root) {
    for (int q = static_cast<int>(threadIdx.x); q < n; q += static_cast<int>(blockDim.x)) {
      if (q != a.rank) pushVector(slotFrom(a, op, q, a.rank, 0), Bytes16{{0, 0, 0, 0}}, op.flag);
    }
  }
  bool ok = true;
  if (root) {
    publishToEveryPeer<T>(a, op, avg, recvBlock<T>(a, 0));
  } else {
    for (std::uint64_t v = op.first; ok && v < op.vectors; v += op.stride) {
      Bytes16 value{{0, 0, 0, 0}};
      ok = awaitVector(a, slotFrom(a, op, a.rank, a.root, v), op.flag, a.ready_wait_step, a.root, a.timeout_ns, value);
      if (ok) storeOutputVector(recvBlock<T>(a, 0), v, op.bytes, value);
    }
  }
  // Every receiver's presence line. These waits get half as long again, as the two-shot's gather waits
  // do: a receiver stalled behind the root must time out first, so the error names the root.
  if (presence) {
    for (int q = static_cast<int>(threadIdx.x); ok && q < n; q += static_cast<int>(blockDim.x)) {
      if (q == a.rank || q == a.root) continue;
      Bytes16 ignored{{0, 0, 0, 0}};
      ok = awaitVector(a, slotFrom(a, op, a.rank, q, 0), op.flag, kFenceStep, q, a.timeout_ns + a.timeout_ns / 2,
                       ignored);
    }
  }
  finishLowLatency(a, ok, op.epoch);
}

template <typename T, typename Op>
hipError_t launchShape(const LaunchArgs& args, unsigned blocks, hipStream_t stream) {
  const bool overlap = args.overlap_launch != 0;
  if (args.fused == kLowLatencyReduceScatter) {
    return launchKernel(reduceScatterLinesKernel<T, Op>, blocks, kPlanKernelThreads, stream, overlap, args);
  }
  if (args.fused == kLowLatencyAllGather) {
    return launchKernel(allGatherLinesKernel<T>, blocks, kPlanKernelThreads, stream, overlap, args);
  }
  if (args.fused == kLowLatencyBroadcast) {
    return launchKernel(broadcastLinesKernel<T>, blocks, kPlanKernelThreads, stream, overlap, args);
  }
  return hipErrorInvalidValue;
}

}  // namespace

// Every dtype x op through the one dispatch (dispatch.h); an unknown value is a launch error.
hipError_t launchCollectiveLineKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream) {
  return kernels::visitDataTypeAndOp(dtype, args.op, hipErrorInvalidValue, [&](auto type, auto reduce) {
    return launchShape<typename decltype(type)::type, typename decltype(reduce)::type>(args, blocks, stream);
  });
}

hipError_t loadCollectiveLineKernels() {
  return kernels::forEveryDataTypeAndOp(hipSuccess, [](auto type, auto reduce) {
    using T = typename decltype(type)::type;
    using Op = typename decltype(reduce)::type;
    const hipError_t folding = loadKernel(reduceScatterLinesKernel<T, Op>);
    if (folding != hipSuccess || !std::is_same_v<Op, kernels::Sum>) return folding;
    // The copying kernels once per element type.
    const hipError_t gather = loadKernel(allGatherLinesKernel<T>);
    return gather != hipSuccess ? gather : loadKernel(broadcastLinesKernel<T>);
  });
}

int collectiveLineKernelsPtxVersion() { return kernelPtxVersion(allGatherLinesKernel<float>); }

}  // namespace peerreduce::gpu
