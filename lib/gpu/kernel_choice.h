// Which kernel runs a rank's program on the GPU: the plan interpreter, a fused one-shot or two-shot
// (kernels/fused_kernels.cu: pulling from peers' scratch, or, for large two-shots, pushing into it),
// or a low-latency kernel (kernels/line_kernels.cu; kernels/collective_line_kernels.cu for the direct
// reduce-scatter, all-gather and broadcast plans), and how much memory the low-latency receive lines take. Host-only,
// so it is unit-tested without a GPU (tests/lib/gpu/kernel_choice_test.cc).
//
// Every rank must choose the same kernel for the same operation (the kernels follow different
// protocols), so the choice depends only on what every rank shares: the plan's shape, the operation's
// size, the world size and settings every rank must give alike; never on pointers or the device.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "config/gpu_settings.h"
#include "gpu/fused_shape.h"
#include "peerreduce/status.h"

namespace peerreduce::gpu {

// Receive lines per channel and rank: [2 parities][world writers][capacity]; the capacity is the
// budget split evenly, so larger worlds carry smaller operations as lines.
inline constexpr std::uint64_t kLineAreaBudgetBytes = std::uint64_t{8} << 20;
struct KernelPolicy {
  bool fused = true;                                     // false: the interpreter runs everything
  std::uint64_t max_bytes = kDefaultLowLatencyMaxBytes;  // one-shot lines; 0 turns them off
  // The one-shot lines' default at two ranks (kDefaultLowLatencyTwoRankMaxBytes), used while max_bytes is
  // the default: a setting of PEERREDUCE_GPU_LL_MAX_BYTES clears it, so the setting holds at every size.
  bool two_rank_default = true;
  std::uint64_t max_two_shot_bytes = kDefaultLowLatencyTwoShotMaxBytes;  // two-shot lines; 0 turns them off
  std::uint64_t push_min_bytes = kDefaultPushMinBytes;                   // push two-shot; 0 turns it off
  // Two-rank one-shots from this size on (past the lines) push their input into the peer's scratch; 0 keeps
  // the pulling one-shot.
  std::uint64_t push_one_shot_min_bytes = kDefaultPushOneShotMinBytes;
  // Bytes of each piece a block of the pushing one-shot pushes before folding the one before; 0: one piece.
  std::uint64_t push_one_shot_piece_bytes = kDefaultPushOneShotPieceBytes;
  // Two-rank direct reduce-scatters, all-gathers and broadcasts past the lines whose block is at least this
  // push their data into the peer's scratch (in pieces of push_one_shot_piece_bytes); 0: the interpreter.
  std::uint64_t push_collective_min_bytes = kDefaultPushCollectiveMinBytes;
  // Worlds up to this many ranks push those collectives (past two ranks a broadcast relays: the root pushes
  // each receiver a range, the receivers pass theirs on); past two ranks only streamed, each sender in its
  // part of the receiver's ring (streamsPieces).
  int push_collective_max_ranks = kDefaultPushCollectiveMaxRanks;
  // Direct reduce-scatters, all-gathers and broadcasts run as lines up to this many bytes of one rank's
  // block (the count argument x the element size); 0 turns them off (the interpreter runs them).
  std::uint64_t collective_max_bytes = kDefaultCollectiveLinesMaxBytes;
  // The collectives' line default at two ranks (kDefaultCollectiveLinesTwoRankMaxBytes), used while
  // collective_max_bytes is the default: a setting of PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES clears it.
  bool collective_two_rank_default = true;
  // Where some region is pinned host memory: lines only up to this many bytes (hostStagedKernelPolicy);
  // while it is the default, two ranks take kDefaultHostLinesTwoRankMaxBytes (a setting clears this).
  std::uint64_t host_lines_max_bytes = kDefaultHostLinesMaxBytes;
  bool host_lines_two_rank_default = true;
  // Where some region is pinned host memory, the two-rank pushing one-shot and collectives stay, from
  // kDefaultHostPushOneShotMinBytes / kDefaultHostPushCollectiveMinBytes while their thresholds above are the
  // defaults (a setting of either clears its flag, so it holds there too); false: the pulling kernels.
  bool push_host = true;
  bool push_one_shot_min_default = true;
  bool push_collective_min_default = true;
  // A plan's copy-engine copies on the copy engines (lib/gpu/copy_engine_launch.h); off by default: the
  // interpreter runs such a plan whole, its copies on the multiprocessors (same steps, same bits), until the
  // copy-engine path passes the hardware suites at every world size (docs/PERF.md says where it stands).
  bool copy_engines = false;
  // The two-rank pushing one-shot and collectives stream an operation larger than the scratch through it in
  // one launch (streamsPieces; PEERREDUCE_GPU_PUSH_STREAM), in pieces of push_stream_piece_bytes.
  bool push_stream = true;
  std::uint64_t push_stream_piece_bytes = kDefaultPushStreamPieceBytes;
  // Programmatic dependent launch (Hopper): each kernel is scheduled while the previous one on the
  // stream finishes and waits on the GPU for it, so the launch latency overlaps the previous work. Only
  // the launch changes, never the protocol, so ranks need not agree on it.
  bool overlap_launch = true;
  // Most blocks of the plan interpreter (PEERREDUCE_GPU_INTERPRETER_MAX_BLOCKS); at most the agreed block
  // cap. Every rank must give the same value: a block's counters pair with the same block on the peers.
  int interpreter_max_blocks = kDefaultInterpreterMaxBlocks;
  // Most blocks of the fused pulling kernels (PEERREDUCE_GPU_PULL_MAX_BLOCKS); at most the agreed block cap.
  // Every rank must give the same value, as for the interpreter's.
  int pull_max_blocks = kDefaultMaxBlocks;
};

// The GPU transport's tuning settings (for measurements; every rank must give the same values, since
// the kernels' protocols differ), read through the settings registry (lib/config/settings_registry.h;
// docs/SETTINGS.md lists their ranges and defaults, lib/config/gpu_settings.h holds the numbers):
//   PEERREDUCE_GPU_MAX_BLOCKS          most blocks per kernel, 1 .. kMaxBlocks (default: the SM count)
//   PEERREDUCE_GPU_INTERPRETER_MAX_BLOCKS  most blocks of the plan interpreter (default: the block cap)
//   PEERREDUCE_GPU_PULL_MAX_BLOCKS     most blocks of the fused pulling kernels (default kDefaultMaxBlocks)
//   PEERREDUCE_GPU_BYTES_PER_BLOCK     input bytes per block of the pull and push kernels (>= 1 KiB)
//   PEERREDUCE_GPU_FUSED               0: the interpreter runs every program; 1 (default): fused kernels
//   PEERREDUCE_GPU_LL_MAX_BYTES        largest one-shot run as lines (0: none)
//   PEERREDUCE_GPU_LL2_MAX_BYTES       largest two-shot run as lines (0: none)
//   PEERREDUCE_GPU_PUSH_MIN_BYTES      smallest two-shot that pushes (0: none)
//   PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES  smallest two-rank one-shot past the lines that pushes (0: none)
//   PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES  bytes a block of it pushes before folding the last piece (0: one)
//   PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES  smallest two-rank direct collective block past the lines that
//                                      pushes (0: none)
//   PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS  largest world whose direct reduce-scatters, all-gathers and
//                                      broadcasts push (2)
//   PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES  largest block of a direct reduce-scatter, all-gather or
//                                      broadcast run as lines (0: none)
//   PEERREDUCE_GPU_LL_HOST_MAX_BYTES   the largest of those run as lines where some region is host
//                                      memory (0: none)
//   PEERREDUCE_GPU_LL_BYTES_PER_BLOCK  input bytes per block of the line kernels (>= 1 KiB)
//   PEERREDUCE_GPU_PUSH_STREAM         0: pushing kernels run operations larger than the scratch in segments
//                                      (1, default: they stream them through it)
//   PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES  bytes of each piece a streamed pushing kernel cycles (0: half a region)
//   PEERREDUCE_GPU_PUSH_HOST           0: host-staged worlds pull past the lines (1, default: the two-rank
//                                      pushing kernels from the host thresholds)
//   PEERREDUCE_GPU_OVERLAP             0: ordinary launches; 1 (default): programmatic dependent launch
//   PEERREDUCE_GPU_FAULT_PROBE_PAIRS   testing: these pairs' access probes fail (gpu/probe_fault.h)
// Byte sizes take parseByteSize's forms (4096, 64K, 2M).
struct GpuSettings {
  int max_blocks = 0;  // 0: not set
  std::uint64_t bytes_per_block = kDefaultBytesPerBlock;
  std::uint64_t line_bytes_per_block = kDefaultLineBytesPerBlock;
  KernelPolicy kernels;
  std::string probe_fault_pairs;  // empty: none; parsed against the world size (parseProbeFaultPairs)
};

// The settings from `getenv` (unset or empty variables keep their defaults); kInvalidArgument naming
// the variable, its value and what it accepts for anything else.
StatusOr<GpuSettings> gpuSettingsFromEnvironment(const std::function<const char*(const char*)>& getenv);

enum class KernelChoice {
  kInterpreter,
  kOneShotPull,
  kTwoShotPull,
  kOneShotLines,
  kTwoShotLines,
  kTwoShotPush,
  kOneShotPush,  // two ranks
  kReduceScatterLines,
  kAllGatherLines,
  kBroadcastLines,
  kReduceScatterPush,  // two ranks
  kAllGatherPush,      // two ranks
  kBroadcastPush,      // two ranks
};

// Whether `choice` is a push kernel (kernels/push_kernels.cuh): no launch-wide synchronisation, so every
// multiprocessor may run a block.
bool runsPushed(KernelChoice choice);

// Whether one launch of `choice` with `blocks` blocks in a world of `world_size` ranks may cycle its pieces
// through `scratch_bytes` of scratch (kernels/push_kernels.cuh, PieceRing): the pushing one-shot and
// collectives, with policy.push_stream. At two ranks every block's share of the scratch must hold two pieces
// (policy.push_stream_piece_bytes, at least one 16-byte vector each), so a block pushes one piece while the
// peer takes the one before. Past two ranks the scratch is cut into one part per sender first
// (senderPartBytes) and a block's share of a part need only hold two vectors: the ring halves its pieces to
// fit (streamedPieceRing). The same on every rank: every input is.
bool streamsPieces(KernelChoice choice, const KernelPolicy& policy, std::uint64_t scratch_bytes, int blocks,
                   int world_size);

// Whether `choice` in a world of `world_size` runs only streamed (its plan's one slot holds one sender's
// block, so past two ranks the pushing reduce-scatter, all-gather and relayed broadcast always cycle through
// the lease): submitted without a
// ring, such an operation runs in the interpreter instead, on every rank alike.
bool streamsOnly(KernelChoice choice, int world_size);

// Whether `choice` is a line kernel (kernels/line_kernels.cu, kernels/collective_line_kernels.cu): its
// blocks split the work by PEERREDUCE_GPU_LL_BYTES_PER_BLOCK and, having no launch-wide synchronisation,
// may use every multiprocessor.
bool runsAsLines(KernelChoice choice);

// Line bytes reserved per writer and parity: a multiple of 64 (a 16-byte input vector is 2 lines; the
// two-shot splits the capacity into scatter and gather halves).
std::uint64_t lineCapacityBytes(int world_size);
// Bytes of one channel's receive lines on one rank.
std::uint64_t lineAreaBytes(int world_size);
// Largest operation (input bytes) whose lines fit: one-shot (every rank's whole input) and two-shot
// (each owner's 1/n of it, scattered and gathered).
std::uint64_t linePayloadBytes(int world_size);
std::uint64_t lineTwoShotPayloadBytes(int world_size);
// The kernel for an operation of `bytes` whose program has shape `kind`. A low-latency two-shot needs
// at least one 16-byte vector per rank, so every rank owns a range. For the direct plans of the other
// collectives `bytes` is one rank's block (what each writer sends each peer); they run as lines when it
// fits both the setting and a writer's lines (linePayloadBytes), else in the interpreter: a fused pull
// kernel would make the same launch, the same one signal round and the same copies as the interpreter
// running those plans, so nothing structural is gained between the lines and the interpreter. At two
// ranks, blocks past the lines from policy.push_collective_min_bytes push instead (kernels/push_kernels.cuh):
// posted stores into the peer's scratch where the interpreter makes remote loads.
// The largest one-shot run as lines at `world_size` ranks under `policy` (before the lines' capacity).
std::uint64_t oneShotLinesMaxBytes(const KernelPolicy& policy, int world_size);
// The largest block of a direct reduce-scatter, all-gather or broadcast run as lines at `world_size`
// ranks under `policy` (before the lines' capacity).
std::uint64_t collectiveLinesMaxBytes(const KernelPolicy& policy, int world_size);

KernelChoice chooseKernel(FusedKind kind, std::uint64_t bytes, int world_size, const KernelPolicy& policy);
// The largest batch (bytes, every buffer rounded up to 16) one launch of the batched low-latency
// one-shot (kind kOneShot) or two-shot (kTwoShot) carries: what chooseKernel runs as lines of that
// shape; 0 where those lines are off or there are no peers (Transport::maxBatchBytes).
std::uint64_t maxBatchBytes(FusedKind kind, int world_size, const KernelPolicy& policy);

// A one-shot that is not lines pushes at two ranks from policy.push_one_shot_min_bytes (when set), else
// pulls.
// The blocks one launch of kernel `choice` over `bytes` of input uses (the multiprocessors it keeps
// busy): one per `bytes_per_block` (`line_bytes_per_block` for the line kernels), at least one, and at
// most `block_cap` (the blocks the ranks agreed on) for the push and line kernels, which have no
// launch-wide synchronisation, at most `pull_cap` of it for the fused pulling ones, and at most
// `interpreter_cap` of it for the plan interpreter. The same on every rank, since every input is.
int launchBlocks(KernelChoice choice, std::uint64_t bytes, int block_cap, std::uint64_t bytes_per_block,
                 std::uint64_t line_bytes_per_block, int interpreter_cap = kDefaultInterpreterMaxBlocks,
                 int pull_cap = kDefaultMaxBlocks);

// Whether launches may overlap (programmatic dependent launch): the setting allows it
// (PEERREDUCE_GPU_OVERLAP) and the kernels that run were compiled with the grid-dependency wait, i.e. from
// PTX of version kGridDependencyPtxVersion or later (kernelsPtxVersion(); -1 when unknown). A kernel
// JIT-compiled from older PTX has no wait, and overlapping it could let it start before the previous
// kernel's writes are visible.
bool launchesMayOverlap(bool setting, int kernels_ptx_version);

}  // namespace peerreduce::gpu
