// Plans: an allreduce written down as data.
//
// A Plan holds, for every rank, the ordered list of steps that rank executes: copy a chunk, reduce a
// chunk from several sources in a fixed order, signal a peer, wait for a peer's signal. Algorithms
// (one-shot, two-shot, ring, ...) generate plans; the verifier proves them right; transports (the
// simulator, the GPUs) execute them. Because the same plan runs everywhere, the simulator's verdict on
// a plan holds for the GPU that executes it.
//
// Memory model of a plan:
// - A plan is written for one collective (Plan::collective). The user's data is `num_blocks` blocks of
//   the operation's count: one for allreduce and broadcast, one per rank for reduce-scatter (block b is
//   what rank b receives) and all-gather (block b is what rank b contributes). Each block is split into
//   `num_chunks` chunks by ChunkLayout; a step always moves one chunk, named by its index over every
//   block (block * num_chunks + chunk).
// - Each rank owns three kinds of buffer: its Input and Output (the user's buffers; aliased when the
//   call is in place) and its Scratch, `scratch_slots` slots of one chunk capacity each, inside the
//   rank's symmetric memory that peers can read. A user buffer holds every block, except reduce-scatter's
//   output and all-gather's input, which hold only the rank's own block (holdsEveryBlock).
// - Flags: rank X holds, for every writer W and flag id F, a counter that only W increments
//   (kSignal from W to X). kWait on X blocks until the counter from W reaches the plan-relative value;
//   the executor adds the count of signals earlier operations sent on the same flag (the epoch base),
//   so the counters only grow and one flag serves every operation. One writer per counter makes the
//   k-th signal a fixed step of a fixed rank, which is what lets the verifier reason about order.
// - Before a rank writes anything in an operation it passes the *entry fence*: for every peer, the
//   kDoneFlag counter has reached the number of done signals all earlier operations owe it. Every
//   plan sends kDoneFlag to a peer after its last access to that peer's memory, so the fence orders
//   the next operation's writes after every earlier read, whatever algorithm ran before.
// - avg (peerreduce/types.h), NCCL's way: the plan is the same for every op and dtype; the executor
//   premultiplies by 1/world_size every element a floating avg reads from a kInput source (a send buffer),
//   copies included, and an integer avg divides the sum at the reduction marked `finalize`. So the buffer
//   kind is the mark of an input read: a plan reads its inputs only through kInput, and (checked by the
//   verifier) reads kInput only while it still holds the input, before an in-place output overwrites it.
//
// Thread safety: a Plan is immutable once built and may be shared between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "peerreduce/types.h"

namespace peerreduce {

enum class BufferKind : std::uint8_t {
  kInput = 0,    // the user's send buffer of `rank` (same memory as kOutput when in place); see "avg" above
  kOutput = 1,   // the user's receive buffer of `rank`
  kScratch = 2,  // slot `slot` of the scratch area in `rank`'s symmetric memory
};

struct BufferRef {
  std::int32_t rank = 0;
  BufferKind kind = BufferKind::kInput;
  std::int32_t slot = 0;  // scratch slot; 0 for kInput / kOutput (their position comes from the chunk)

  friend bool operator==(const BufferRef&, const BufferRef&) = default;
};

enum class StepKind : std::uint8_t {
  kCopy = 0,    // dst <- source[0] for chunk `chunk` (`copy_engine`: moved by a copy engine, same meaning)
  kReduce = 1,  // dst <- fold(sources in order) for chunk `chunk`; `finalize`: an integer avg divides here
  kSignal = 2,  // increments flag `flag` held by rank `peer`, written by this rank (release)
  kWait = 3,    // waits until flag `flag` from writer `peer` reaches epoch base + `value` (acquire)
};

// Flag ids every plan uses the same way (algorithms may use ids from kFirstAlgorithmFlag up).
inline constexpr std::int32_t kDoneFlag = 0;            // "I no longer access your memory in this op"
inline constexpr std::int32_t kFirstAlgorithmFlag = 1;  // data-ready flags of the algorithms

struct Step {
  StepKind kind = StepKind::kCopy;
  bool finalize = false;  // kReduce: the last reduction of this chunk (an integer avg divides here)
  // kCopy only: a copy engine (DMA) moves the chunk instead of the multiprocessors. The step means
  // exactly what a kCopy means (program order, premultiplied by a floating avg when it reads kInput),
  // so an executor without copy engines runs it as an ordinary copy and the verifier's rules do not
  // change; it tells executors that can what hardware to use and the cost model what to charge
  // (a copy engine's launch cost and rate, DeviceModel). Its completion is made visible to a peer the
  // way every copy's is: a kSignal after it, which a GPU issues only once the copy has landed.
  bool copy_engine = false;
  std::int32_t chunk = 0;       // kCopy / kReduce
  BufferRef dst;                // kCopy / kReduce
  std::uint32_t src_begin = 0;  // kCopy / kReduce: first source in RankProgram::sources
  std::uint32_t src_count = 0;  // kCopy: 1; kReduce: >= 1
  std::int32_t peer = 0;        // kSignal: the rank whose flag is incremented; kWait: the writer
  std::int32_t flag = 0;        // kSignal / kWait
  std::uint32_t value = 0;      // kWait: plan-relative target count (>= 1)
};

struct RankProgram {
  std::vector<Step> steps;
  std::vector<BufferRef> sources;  // sources of copy / reduce steps, in fold order
};

struct Plan {
  Collective collective = Collective::kAllReduce;
  Algorithm algorithm = Algorithm::kOneShot;
  int world_size = 1;
  int num_blocks = 1;     // blocksOf(collective, world_size): blocks of the operation's count
  int root = 0;           // broadcast: the rank whose input every rank receives; 0 otherwise
  int num_chunks = 1;     // each block's count is split into this many chunks (ChunkLayout)
  int scratch_slots = 0;  // slots of one chunk capacity each, per rank
  // The last `private_slots` of each rank's scratch slots are its own: no peer reads or writes them (the
  // verifier refuses a step that does). So an executor may keep them apart from the rest, in the rank's
  // device memory where the rest is pinned host memory that peers reach (host-staged worlds): data a copy
  // engine brought down from host memory is then reduced at device-memory speed. 0 for most plans.
  int private_slots = 0;
  int num_flags = 1;                  // flag ids 0 .. num_flags-1 per (holder, writer) pair
  bool in_place = false;              // generated for send == recv
  std::string description;            // human-readable summary, e.g. "ring over 0-1-2-3"
  std::vector<RankProgram> programs;  // one per rank, index = rank
  // Derived: signalCounts(*this), kept so executors advance epochs without rescanning the programs.
  // Whoever edits programs by hand must refresh it; the verifier rejects a stale copy.
  std::vector<std::uint32_t> signal_counts;
};

// Blocks of the user's data in `collective` on a world of `world_size` (Plan::num_blocks).
int blocksOf(Collective collective, int world_size);
// Whether a rank's `kind` buffer (kInput or kOutput) holds every block of `collective`; otherwise it
// holds only the rank's own block (reduce-scatter's output, all-gather's input).
bool holdsEveryBlock(Collective collective, BufferKind kind);

// Signals a plan sends per execution on (holder, writer, flag): what the epoch base of that flag
// advances by after each execution. Index: (holder * world + writer) * num_flags + flag.
std::vector<std::uint32_t> signalCounts(const Plan& plan);

// How a count is split into chunks. Chunk boundaries are multiples of `align_elems` elements so that
// GPU kernels can use 16-byte vector accesses inside every chunk but the last.
struct ChunkLayout {
  std::size_t count = 0;
  int num_chunks = 1;
  std::size_t align_elems = 1;
  std::size_t chunk_capacity = 0;  // elements in every chunk but possibly the last; slot capacity

  static ChunkLayout make(std::size_t count, int num_chunks, std::size_t elem_size);
  std::size_t begin(int chunk) const;
  std::size_t size(int chunk) const;
  // A step's chunk index (over every block, Plan::num_blocks) as its block and its chunk in the block.
  int blockOf(int index) const { return index / num_chunks; }
  int chunkOf(int index) const { return index % num_chunks; }
};

// Elements from one block's start to the next in a rank's `kind` user buffer: `block_stride` (the
// user's per-rank count) where the buffer holds every block, 0 where it holds only the rank's own.
std::size_t blockStrideOf(Collective collective, BufferKind kind, std::size_t block_stride);
// Where the chunk of step index `index` starts in a rank's `kind` user buffer, in elements.
std::size_t userChunkOffset(Collective collective, BufferKind kind, const ChunkLayout& layout, std::size_t block_stride,
                            int index);

// Bytes of scratch a plan needs per rank for `count` elements of `elem_size` bytes: slots x chunk
// capacity, each slot rounded up to kScratchSlotAlignBytes.
inline constexpr std::size_t kScratchSlotAlignBytes = 256;  // keeps every slot 16-byte-vector and cache-line aligned
std::size_t scratchSlotBytes(const ChunkLayout& layout, std::size_t elem_size);
std::size_t scratchBytes(const Plan& plan, const ChunkLayout& layout, std::size_t elem_size);
// The first of a plan's private slots (Plan::private_slots): scratch_slots when it has none.
inline int firstPrivateSlot(const Plan& plan) { return plan.scratch_slots - plan.private_slots; }

// One line per step, e.g. "r1 #3 reduce c2 [s0.0 s1.0] -> s1.4 final", for logs and failures.
std::string describeStep(const RankProgram& program, const Step& step);

// The first rank other than `self` whose memory `step` reads, writes or signals (a wait touches only
// its own counters) and for which `match(peer)` holds; none when no such rank (a peer may itself be
// out of range, negative included, which is what range checks look for). Allocates nothing, so submit
// paths can call it per step. Sources past the end of `program.sources` are ignored (the verifier
// reports them).
template <typename Match>
std::optional<int> firstTouchedPeer(const RankProgram& program, const Step& step, int self, Match&& match) {
  auto check = [&](int peer) { return peer != self && match(peer); };
  if (step.kind == StepKind::kSignal) return check(step.peer) ? std::optional<int>(step.peer) : std::nullopt;
  if (step.kind != StepKind::kCopy && step.kind != StepKind::kReduce) return std::nullopt;
  if (check(step.dst.rank)) return step.dst.rank;
  for (std::uint32_t i = 0; i < step.src_count && step.src_begin + i < program.sources.size(); ++i) {
    const int peer = program.sources[step.src_begin + i].rank;
    if (check(peer)) return peer;
  }
  return std::nullopt;
}
std::string describeRankProgram(const RankProgram& program, int rank);

}  // namespace peerreduce
