// The plan interpreter kernel: runs one rank's program of any verified plan on the GPU. Its launch and load for
// each element type are compiled with that type's group (kernels/typed_launch.h, kernels/plan_kernels_<group>.cu);
// kernels/plan_interpreter.cu picks the type.
//
// Algorithm. Every block runs the whole program. A copy or reduce step of chunk c is split into
// gridDim.x slices of the chunk's elements (slice starts are 16-byte multiples), and block b does
// slice b of every step; since every step of chunk c maps element i to element i, whatever a block
// reads from its own rank's memory it wrote itself in an earlier step, and needs no barrier with the
// other blocks. Between ranks, block b of one rank only exchanges data with block b of another (they
// slice alike), so each block is an independent instance of the plan with counters of its own: a plan
// signal increments the peer's counter for (this rank, flag, b) after a barrier and a system fence, and
// a plan wait polls this rank's counter for (writer, flag, b) until base + value, then fences. One
// writer per counter, signals in program order: the verifier's model exactly. Done signals are per
// rank: the last block to finish sends them once every block is done (later than the plan places them,
// which is always safe), and the entry fence polls one done counter per peer. The last block also
// advances the bases in device memory, so the kernel can be captured in a graph and replayed any
// number of times.
//
// Reductions fold sources strictly in the plan's order through kernels/reduce_ops.h, the same code
// the simulator runs, so results are bit-identical to the simulator's; under a floating avg every read
// of the send buffer (a kInput source, copies included) is premultiplied, as the simulator does. Data
// moves in 16-byte vectors when every pointer of the step is 16-byte aligned (chunks start on 16-byte
// boundaries; user buffers may not), with a scalar path otherwise.
//
// A program with copy-engine copies runs as several launches of this kernel over ranges of its steps
// (LaunchArgs::part), the copies enqueued by the host between and beside them: only the first launch
// passes the entry fence and only the last finishes the operation, so the bases stay the operation's
// throughout and a captured graph of all the launches replays like one launch.
//
// Every wait is bounded: it gives up when the host-mapped abort word is set, when another block of
// this rank failed, or when timeout_ns passed; the first failure is written to the host-mapped error
// report and the kernel returns. It never traps.
#pragma once

#include <array>

#include "device_plan.h"
#include "dispatch.h"
#include "plan_device.cuh"
#include "plan_kernel_launch.h"
#include "portability.h"
#include "reduce_ops.h"
#include "typed_launch.h"

namespace peerreduce::gpu::plan {
namespace {

// `chunk_begin`: the chunk's first element within its block; `block`: which block (plans of several).
__device__ unsigned char* resolve(const LaunchArgs& a, const DeviceRef& ref, std::uint64_t chunk_begin,
                                  std::uint64_t block) {
  switch (ref.kind) {
    case kDeviceBufferInput:
      return const_cast<unsigned char*>(static_cast<const unsigned char*>(a.send)) +
             (block * a.send_block_stride + chunk_begin) * a.elem_size;
    case kDeviceBufferOutput:
      return static_cast<unsigned char*>(a.recv) + (block * a.recv_block_stride + chunk_begin) * a.elem_size;
    default: {  // kDeviceBufferScratch: the host uploads verified plans only (gpu_transport.cc)
      const std::uint64_t offset = a.scratch_offset + static_cast<std::uint64_t>(ref.slot) * a.slot_bytes;
      // The verifier lets no peer name a private slot, so one named here is this rank's own.
      if (a.private_scratch != nullptr && ref.slot >= a.first_private_slot) return a.private_scratch + offset;
      return a.peers->scratch[ref.rank] + offset;
    }
  }
}

template <typename T, typename Op>
__device__ void dataStep(const LaunchArgs& a, const DeviceStep& step, bool is_reduce) {
  __shared__ unsigned char* sources[kMaxSources];
  __shared__ std::uint8_t from_send[kMaxSources];  // 1 where the source is the send buffer (avg premultiplies it)
  __shared__ unsigned char* destination;
  const std::uint64_t block = static_cast<std::uint64_t>(step.chunk / a.num_chunks);
  const std::uint64_t chunk_begin =
      min(static_cast<std::uint64_t>(step.chunk % a.num_chunks) * a.chunk_capacity, a.count);
  const std::uint64_t chunk_size = min(chunk_begin + a.chunk_capacity, a.count) - chunk_begin;
  // This block's slice: a multiple of 16 bytes (a whole number of vectors) per block.
  constexpr std::uint64_t kPerVector = kVectorBytes / sizeof(T);
  const std::uint64_t vectors = (chunk_size + kPerVector - 1) / kPerVector;
  const std::uint64_t per_block = (vectors + gridDim.x - 1) / gridDim.x * kPerVector;
  const std::uint64_t lo = min(static_cast<std::uint64_t>(blockIdx.x) * per_block, chunk_size);
  const std::uint64_t hi = min(lo + per_block, chunk_size);
  __syncthreads();  // the shared tables of the previous step are no longer read
  for (std::uint32_t s = threadIdx.x; s < step.src_count; s += blockDim.x) {
    const DeviceRef& ref = a.sources[step.src_begin + s];
    sources[s] = resolve(a, ref, chunk_begin, block) + lo * sizeof(T);
    from_send[s] = ref.kind == kDeviceBufferInput ? 1 : 0;
  }
  if (threadIdx.x == 0) destination = resolve(a, step.dst, chunk_begin, block) + lo * sizeof(T);
  __syncthreads();
  if (hi == lo) return;
  if (!is_reduce) {
    if (from_send[0] != 0) {
      copyFromSend<T>(a, reinterpret_cast<T*>(destination), reinterpret_cast<const T*>(sources[0]), hi - lo);
    } else {
      copySlice(destination, sources[0], (hi - lo) * sizeof(T));
    }
    return;
  }
  // avg: the send buffer's elements premultiplied (floating), the finalising reduction divided (integers).
  reduceSlice<T, Op>(reinterpret_cast<T*>(destination), reinterpret_cast<T* const*>(sources),
                     static_cast<int>(step.src_count), hi - lo, avgStep(a, step.finalize != 0, from_send));
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kPlanKernelThreads) planKernel(LaunchArgs a) {
  enterKernel();
  const std::uint64_t* my_counters = a.peers->counters[a.rank];
  const int block = static_cast<int>(blockIdx.x);
  const bool whole = a.part == 0;
  // A part after a failed one sends nothing, as the rest of a failed single launch would not.
  // Block-uniform (__syncthreads_or): the word may change while the block's threads read it, and a
  // thread that returned would leave the others at a barrier without it.
  if (!whole && __syncthreads_or(*reinterpret_cast<volatile std::uint32_t*>(&a.control->failed) != 0)) return;
  if ((whole || (a.part & kLaunchPartFirst) != 0) && !passEntryFence(a, my_counters)) return;
  // A part may follow copy-engine copies of this rank: its first signal fences as after data.
  bool touched_data = !whole;  // since the last signal
  const std::uint32_t end = whole ? a.num_steps : a.step_end;
  for (std::uint32_t i = whole ? 0 : a.step_begin; i < end; ++i) {
    const DeviceStep step = a.steps[i];
    if (!whole && step.copy_engine != 0) continue;  // enqueued on a copy engine by the host
    switch (step.kind) {
      case kDeviceStepCopy:
      case kDeviceStepReduce:
        dataStep<T, Op>(a, step, step.kind == kDeviceStepReduce);
        touched_data = true;
        break;
      case kDeviceStepSignal:
        if (step.flag == kDoneFlagId) break;  // sent once per rank by finishLaunch
        signalPeer(a, step.peer, step.flag, touched_data);
        touched_data = false;
        break;
      default: {  // kDeviceStepWait
        // Block b waits for block b of the writer: the only block whose slice it reads.
        const std::uint32_t index = counterIndex(step.peer, step.flag, block);
        const std::uint64_t target = a.control->base[index] + step.value;
        if (!waitFor(a, my_counters + index, target, i, step.peer)) return;
      }
    }
  }
  if (whole || (a.part & kLaunchPartLast) != 0) finishLaunch(a);
}

}  // namespace

template <typename T>
hipError_t launchFor(const LaunchArgs& args, unsigned blocks, hipStream_t stream) {
  const bool overlap = args.overlap_launch != 0;
  return kernels::visitReduceOp(args.op, hipErrorInvalidValue, [&](auto reduce) {
    return launchKernel(planKernel<T, typename decltype(reduce)::type>, blocks, kPlanKernelThreads, stream, overlap,
                        args);
  });
}

template <typename T>
hipError_t loadFor() {
  return loadEveryOp([](auto reduce) { return std::array{&planKernel<T, typename decltype(reduce)::type>}; });
}

}  // namespace peerreduce::gpu::plan
