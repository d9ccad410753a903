// What the host hands the GPU kernels: a plan in device memory and the launch arguments.
//
// Shared by the host side (lib/gpu/) and the kernels (kernels/*.cu), so it holds only plain structs
// that have the same layout under the host compiler and the device compiler.
//
// Every block of a kernel runs the rank's whole program on its own slice of every chunk, and block b
// of one rank only ever exchanges data with block b of another (both slice the same way). So each
// block is one instance of the verified plan, and its flags are its own: counters are per block, and
// each counter has one writer (block b of the peer) whose signals arrive in program order, exactly the
// single-writer counters the verifier reasons about.
//
// Memory of one rank's symmetric region (device memory, shared with peers through IPC):
//   [counters: kMaxRanks x kMaxDeviceFlags x kMaxBlocks x 8 bytes]  counters[writer][flag][block];
//                                                                    peers' block b writes slot b
// Done flags are the exception: they say "this whole rank is finished with your memory", so they are
// per rank, not per block: the last block of a launch to finish sends them (the plan's count to each
// peer) once every block is done, into counters[writer][kDoneFlag][0]. The entry fence then polls one
// counter per peer, and no later operation, however it slices, can overwrite what an earlier one read.
//   [scratch ...]                                the plan's scratch slots (from ExecutionRequest offset)
// and of its control block (device memory, private to the rank):
//   base[writer][flag][block]  signals earlier operations sent on each counter
//   finished                   blocks of the current launch that are done; the last one advances base,
//                              so no block ever reads a base another block of the launch changed
#pragma once

#include <cstdint>

#include "portability.h"

// counterIndex is used by host and device code.
#define PR_HOST_DEVICE_INDEX PR_HOST_DEVICE

namespace peerreduce::gpu {

inline constexpr int kMaxRanks = 64;       // peerreduce's largest world
inline constexpr int kMaxDeviceFlags = 4;  // counters per writer and block: plans' flags, then the push kernel's
inline constexpr int kMaxPlanFlags = kMaxDeviceFlags - 1;  // the last one is the push two-shot's own
inline constexpr int kMaxBlocks = 256;  // blocks per kernel: above the SM count of every GPU we target

// Index of counter (writer, flag, block) in a rank's counter array and in its base array.
PR_HOST_DEVICE_INDEX inline std::uint32_t counterIndex(int writer, int flag, int block) {
  return (static_cast<std::uint32_t>(writer) * kMaxDeviceFlags + static_cast<std::uint32_t>(flag)) * kMaxBlocks +
         static_cast<std::uint32_t>(block);
}
inline constexpr std::uint32_t kCounterCount = static_cast<std::uint32_t>(kMaxRanks) * kMaxDeviceFlags * kMaxBlocks;

// The device values of the plan's buffer and step kinds (peerreduce/plan.h's BufferKind and StepKind).
// The host copies the plan's values across unchanged; lib/gpu/device_values.h asserts at compile time
// that these are the same numbers, so a change on either side fails the build instead of a kernel.
inline constexpr std::int32_t kDeviceBufferInput = 0;
inline constexpr std::int32_t kDeviceBufferOutput = 1;
inline constexpr std::int32_t kDeviceBufferScratch = 2;
inline constexpr std::int32_t kDeviceStepCopy = 0;
inline constexpr std::int32_t kDeviceStepReduce = 1;
inline constexpr std::int32_t kDeviceStepSignal = 2;
inline constexpr std::int32_t kDeviceStepWait = 3;

struct DeviceRef {
  std::int32_t rank;
  std::int32_t kind;  // kDeviceBuffer*
  std::int32_t slot;
};

struct DeviceStep {
  std::int32_t kind;  // kDeviceStep*
  std::int32_t finalize;
  std::int32_t copy_engine;  // a copy a copy engine moves; a launch of part of the program skips it
  std::int32_t chunk;
  DeviceRef dst;
  std::uint32_t src_begin;
  std::uint32_t src_count;
  std::int32_t peer;
  std::int32_t flag;
  std::uint32_t value;
};

// Where every rank's memory is, as this rank's kernels see it (peers' pointers are IPC mappings).
struct PeerTable {
  std::uint64_t* counters[kMaxRanks];  // each rank's counter array (kCounterCount entries)
  unsigned char* scratch[kMaxRanks];   // each rank's scratch base (offset 0 of its scratch area)
  unsigned char* lines[kMaxRanks];     // each rank's low-latency receive lines (see LaunchArgs::line_capacity)
  // Non-zero where the rank's counters lie in pinned host memory (its region is host-placed for a
  // host-staged link). GPUs on PCIe have no atomics on host memory, so signals to such a rank are a
  // load and a store: each counter has exactly one writer (one block of one rank), so nothing races.
  std::uint8_t counters_in_host_memory[kMaxRanks];
};

struct ControlBlock {
  std::uint64_t base[kCounterCount];  // indexed by counterIndex
  std::uint32_t finished;
  std::uint32_t failed;  // set by the first block that fails, so the others stop waiting
  // Low-latency operations done, one copy per block index: block b of a launch of G blocks reads copy b
  // when it starts and, when it ends, advances copies b, b + G, b + 2G, ... So every copy advances once
  // per launch while no block waits for another or reads a copy another block of the launch writes
  // (a shared epoch advanced by the last block to finish needed a device-wide fence and atomic, which
  // waited for the block's writes to peers to be acknowledged).
  std::uint32_t line_epoch[kMaxBlocks];
  // Global-timer time of the launch's last read of the host-mapped abort word (kernels/abort_ration.h):
  // waiters claim the next read by compare-and-swap, so all of them together read it rarely.
  std::uint64_t abort_checked_ns;
  // Reads of the abort word so far (tests: the ration holds); advanced by each claimed check.
  std::uint64_t abort_reads;
};

// Written by the first block that fails (in host-mapped memory, so the host reads it any time).
struct ErrorReport {
  std::uint64_t code;   // 0 none; else ErrorCode (kTimeout, kAborted)
  std::uint64_t step;   // step index in the rank's program, or ~0 for the entry fence
  std::uint64_t peer;   // the rank waited for
  std::uint64_t value;  // the counter value reached / target (packed: reached << 32 | target-low)
};

inline constexpr std::uint64_t kFenceStep = ~std::uint64_t{0};

struct LaunchArgs {
  const DeviceStep* steps;
  const DeviceRef* sources;
  const std::uint32_t* signal_counts;  // this rank as holder: [writer * kMaxDeviceFlags + flag], per plan signal
  const std::uint32_t* done_to;        // done signals this rank sends each peer per operation [peer]
  std::uint32_t num_steps;
  std::int32_t rank;
  std::int32_t world_size;
  std::int32_t op;  // ReduceOp
  const void* send;
  void* recv;
  std::uint64_t count;           // elements per block
  std::uint64_t chunk_capacity;  // elements
  // Plans of several blocks (reduce-scatter, all-gather): a step's chunk index is block * num_chunks +
  // chunk, and the block starts block x stride elements into the buffer; the stride is 0 for a buffer
  // that holds only the rank's own block (and for plans of one block).
  std::uint64_t send_block_stride;
  std::uint64_t recv_block_stride;
  std::uint64_t slot_bytes;
  std::uint64_t scratch_offset;
  std::int32_t num_chunks;
  std::uint32_t elem_size;
  const PeerTable* peers;
  ControlBlock* control;
  const std::uint32_t* abort_word;  // host-mapped; non-zero makes every wait give up
  ErrorReport* error;               // host-mapped
  std::uint64_t timeout_ns;
  // Fused kernels (kernels/fused_kernels.cuh), chosen by the host when the rank's program is exactly
  // that shape (lib/gpu/fused_shape.h); the plan's steps are then not read, only its counts.
  // 0: interpret the plan; 1: one-shot; 2: two-shot; 3, 4: low-latency one-, two-shot; 5: push two-shot;
  // 6, 7, 8: low-latency reduce-scatter, all-gather, broadcast (kernels/collective_line_kernels.cu)
  std::int32_t fused;
  std::int32_t ready_flag;         // the plan's "my input is published" flag
  std::int32_t result_flag;        // two-shot: the plan's "my chunk's result is ready" flag
  std::uint32_t ready_wait_step;   // program index of the first ready wait (error reports name steps)
  std::uint32_t result_wait_step;  // two-shot: program index of the first result wait
  // Low-latency one-shot and two-shot (fused 3 and 4, kernels/line_kernels.cu): data travels in 16-byte
  // lines of 8 data bytes and two copies of the operation's flag. A rank's receive lines are
  // [parity 0..1][writer 0..world-1][line_capacity bytes]; the parity alternates per operation.
  std::uint64_t line_capacity;
  std::int32_t root;  // broadcast: the rank whose input every rank receives (Plan::root)
  // Host only: launch as a programmatic dependent launch (portability.h launchKernel), so the kernel is
  // scheduled while the previous one on the stream finishes. Every kernel begins with enterKernel().
  std::int32_t overlap_launch;
  // A program with copy-engine copies runs as several launches (lib/gpu/copy_engine_schedule.h): `part`
  // 0 runs the whole program in one launch (every other kernel, and plans without such copies); otherwise
  // the launch runs steps [step_begin, step_end) skipping copy-engine copies, which the host enqueues
  // beside it, passes the entry fence only with kLaunchPartFirst and finishes the operation (done
  // signals, bases) only with kLaunchPartLast.
  std::int32_t part;
  std::uint32_t step_begin;
  std::uint32_t step_end;
  // Push one-shot (kernels/push_kernels.cuh): bytes of each piece a block pushes before folding the one
  // before it; 0: one piece.
  std::uint64_t push_piece_bytes;
  // The pushing one-shot and collectives, streamed (ExecutionRequest::ring_bytes): the scratch bytes from
  // scratch_offset they cycle their pieces through, for an operation larger than the scratch; 0: each
  // piece has a place of its own (the operation fits).
  std::uint64_t ring_bytes;
  // This rank's slots from `first_private_slot` on (Plan::private_slots) live here, laid out as the
  // scratch is, where the region is pinned host memory; null: they are the region's own.
  unsigned char* private_scratch;
  std::int32_t first_private_slot;
};

inline constexpr std::int32_t kLaunchPartFirst = 1;
inline constexpr std::int32_t kLaunchPartLast = 2;
inline constexpr std::int32_t kLaunchPartMiddle = 4;  // neither first nor last, so `part` is never 0

// A batched low-latency one-shot (Communicator::allreduceBatch): the buffers it reduces, passed by
// value as a second kernel parameter (2 KiB, within every platform's 4 KiB parameter limit). Item i
// owns the vectors [first_vector, first_vector + ceil(bytes / 16)) of the operation; LaunchArgs::count
// is then the number of elements in all those vectors together.
inline constexpr int kMaxBatchTableItems = 64;  // transport.h kMaxBatchItemsPerSubmit (checked where both are seen)
struct BatchTableItem {
  const void* send;
  void* recv;
  std::uint64_t bytes;
  std::uint64_t first_vector;
};
struct BatchTable {
  std::uint32_t items;
  std::uint32_t reserved;
  BatchTableItem item[kMaxBatchTableItems];
};

inline constexpr std::int32_t kFusedOneShot = 1;
inline constexpr std::int32_t kFusedTwoShot = 2;
inline constexpr std::int32_t kLowLatencyOneShot = 3;
inline constexpr std::int32_t kLowLatencyTwoShot = 4;
inline constexpr std::int32_t kPushTwoShot = 5;
inline constexpr std::int32_t kLowLatencyReduceScatter = 6;
inline constexpr std::int32_t kLowLatencyAllGather = 7;
inline constexpr std::int32_t kLowLatencyBroadcast = 8;
inline constexpr std::int32_t kPushOneShot = 9;  // two ranks (kernels/push_kernels.cuh)
// The direct reduce-scatter, all-gather and broadcast pushed into the peer's scratch: two ranks
// (kernels/push_kernels.cuh, pushCollectiveKernel).
inline constexpr std::int32_t kPushReduceScatter = 10;
inline constexpr std::int32_t kPushAllGather = 11;
inline constexpr std::int32_t kPushBroadcast = 12;
// Whether args.fused names a push kernel (kernels/push_kernels.cu launches those).
inline constexpr bool isPushKernel(std::int32_t fused) {
  return fused == kPushTwoShot || fused == kPushOneShot || fused == kPushReduceScatter || fused == kPushAllGather ||
         fused == kPushBroadcast;
}

}  // namespace peerreduce::gpu
