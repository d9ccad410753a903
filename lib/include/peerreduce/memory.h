// Memory: the settings and statistics of peerreduce's memory pools, as users see them.
//
// Two kinds of pool back every transport:
// - The symmetric pool: one region per rank, taken from the transport when a communicator is created
//   (IPC-shareable device memory on GPUs, host memory on the simulator). Scratch and application
//   blocks are sub-allocated from it; flags and signal counters are the transport's, at fixed offsets
//   outside it (docs/MEMORY.md says why). Every rank runs the same sequence of pool calls, and the pool
//   is deterministic, so a block has the same offset on every rank and a peer addresses it as
//   "peer region base + offset".
// - The pinned host pool: page-locked host memory for host-staged paths, bounded by a byte limit,
//   caching idle blocks for reuse and evicting the least recently used ones when the limit is reached.
//
// This header holds what a user reads or sets: MemorySettings (validated, with PEERREDUCE_* environment
// variables) and the statistics structs PoolStats, PinnedStats and RegistrationStats. The pools
// themselves are internal (lib/memory/); docs/MEMORY.md describes their algorithms.
//
// Environment variables (each overrides what code set; an empty one counts as unset; a malformed or
// out-of-range value is a kInvalidArgument error naming the variable, the value and what is accepted;
// docs/SETTINGS.md lists them with every other setting):
//   PEERREDUCE_POOL_BYTES             symmetric region per rank, a multiple of 2 MiB (2 MiB .. 64 GiB)
//   PEERREDUCE_POOL_QUOTA_BYTES       most bytes the communicator may hold in its pool; 0 = the whole pool
//   PEERREDUCE_POOL_ALIGNMENT         default alignment of pool blocks: a power of two, 16 .. 2 MiB
//   PEERREDUCE_POOL_DEFRAG_THRESHOLD  fragmentation (0 .. 1) at which idle scratch is compacted
//                                     automatically (again once it fell to half of it); 1 = never
//   PEERREDUCE_PINNED_LIMIT_BYTES     most bytes of pinned host memory held at once (4 KiB .. 1 TiB)
// Byte sizes accept the forms of parseByteSize (config.h): 67108864, 64M, 64MiB, 1G.
//
// Ownership and thread safety: these are plain values; copy them freely between threads.
//
// Example:
//   peerreduce::MemorySettings memory;
//   memory.pool_bytes = std::size_t{128} << 20;
//   auto effective = peerreduce::MemorySettings::fromEnvironment(memory);  // env wins over code
//   if (!effective.isOk()) std::fprintf(stderr, "%s\n", effective.status().toString().c_str());
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "peerreduce/status.h"

namespace peerreduce {

// 2 MiB: the CUDA/HIP IPC allocation granularity. Memory exported through cudaIpcGetMemHandle /
// hipIpcGetMemHandle is mapped by peers in whole granules, so a symmetric region is a whole number of
// them and its base is aligned to one.
inline constexpr std::size_t kIpcGranularityBytes = std::size_t{2} << 20;
// 16 bytes: kernels read and write pool memory as 16-byte vectors (float4 / uint4), so every block
// starts and ends on a 16-byte boundary; sizes are rounded up to a multiple of this.
inline constexpr std::size_t kMinPoolAlignmentBytes = 16;
// An offset aligned beyond the region base's own alignment would not give an aligned address.
inline constexpr std::size_t kMaxPoolAlignmentBytes = kIpcGranularityBytes;
// 256 bytes: the scratch slot alignment of plans (kScratchSlotAlignBytes in plan.h), two 128-byte GPU
// cache lines; blocks that start on it never share a cache line with a neighbour.
inline constexpr std::size_t kDefaultPoolAlignmentBytes = 256;
// 128 MiB: the default 32 MiB of scratch (kDefaultScratchBytes) for each of the kMaxChannels channels
// (eager work and three graph captures, peerreduce/transport.h), so a captured operation runs in as few
// segments as an eager one (with 64 MiB a capture channel got 10.7 MiB, and a captured 16 MiB allreduce
// took 93.5 us where the eager one took 64.8 on 2 x H200); user buffers placed in the pool come out of
// the capture channels' shares. A multiple of the IPC granularity, and small next to the tens of GiB of
// the GPUs we target.
inline constexpr std::size_t kDefaultPoolBytes = std::size_t{128} << 20;
inline constexpr std::size_t kMinPoolBytes = kIpcGranularityBytes;   // one granule
inline constexpr std::size_t kMaxPoolBytes = std::size_t{64} << 30;  // more than any GPU we target has
// 0.5: above it the largest hole is under half of the free space, so a request for contiguous scratch
// is likely to fail while plenty is free; compacting idle scratch then is worth its cost.
inline constexpr double kDefaultDefragThreshold = 0.5;
// 256 MiB: a host-staged allreduce holds two scratch-sized staging buffers (outgoing and incoming) per
// stream; this double-buffers the default 32 MiB scratch for four streams while staying a small share of
// a node's host memory (pinned pages are taken away from the operating system).
inline constexpr std::size_t kDefaultPinnedLimitBytes = std::size_t{256} << 20;
// 4 KiB: the host page size; mlock and hipHostRegister work on whole pages.
inline constexpr std::size_t kPinnedPageBytes = std::size_t{4} << 10;
inline constexpr std::size_t kMinPinnedLimitBytes = kPinnedPageBytes;      // room for one block
inline constexpr std::size_t kMaxPinnedLimitBytes = std::size_t{1} << 40;  // 1 TiB: beyond any node's RAM

// What a block of the symmetric pool holds. Only kScratch may be moved by defragmentation, and only
// while a single handle refers to it (see SymmetricPool in lib/memory/symmetric_pool.h).
enum class BlockKind : std::uint8_t {
  kScratch = 0,     // pool-internal scratch: contents do not matter between operations; movable
  kFlags = 1,       // flags and epochs: peers poll them at a fixed address; never moves
  kUserBuffer = 2,  // user buffers placed in or registered with the pool; never moves
};
const char* blockKindName(BlockKind kind);

// Statistics of one symmetric pool. Counters are cumulative since creation; the rest describe now.
struct PoolStats {
  std::uint64_t capacity_bytes = 0;
  std::uint64_t quota_bytes = 0;   // effective limit on bytes_in_use (capacity when no quota is set)
  std::uint64_t bytes_in_use = 0;  // sum of live block sizes (sizes rounded up to 16 bytes)
  std::uint64_t peak_bytes_in_use = 0;
  std::uint64_t live_blocks = 0;
  std::uint64_t max_live_blocks = 0;     // the descriptor table's limit
  std::uint64_t allocations = 0;         // successful allocate / allocateBestEffort calls
  std::uint64_t failed_allocations = 0;  // calls that returned kOutOfMemory
  std::uint64_t free_blocks = 0;         // maximal free ranges (neighbours are always coalesced)
  std::uint64_t largest_free_block_bytes = 0;
  double fragmentation = 0.0;          // 1 - largest free / total free; 0 when nothing is free
  std::uint64_t defragmentations = 0;  // compaction passes run, on request or automatically
  std::uint64_t blocks_moved = 0;
  std::uint64_t bytes_moved = 0;

  friend bool operator==(const PoolStats&, const PoolStats&) = default;
};

// Statistics of one pinned host pool.
struct PinnedStats {
  std::uint64_t limit_bytes = 0;
  std::uint64_t bytes_pinned = 0;  // held from the system: in use + idle
  std::uint64_t peak_bytes_pinned = 0;
  std::uint64_t bytes_in_use = 0;  // handed out (block capacities, not requested sizes)
  std::uint64_t bytes_idle = 0;    // cached for reuse, evictable
  std::uint64_t blocks_in_use = 0;
  std::uint64_t blocks_idle = 0;
  std::uint64_t acquisitions = 0;        // successful acquire calls
  std::uint64_t reuses = 0;              // acquisitions served by an idle block (hits)
  std::uint64_t system_allocations = 0;  // acquisitions that took new memory from the system (misses)
  std::uint64_t evictions = 0;           // idle blocks returned to the system: to stay under the limit, or trim()
  std::uint64_t bytes_evicted = 0;
  std::uint64_t failures = 0;         // acquire calls that failed (limit or system)
  std::uint64_t lock_failures = 0;    // blocks the system would not lock; they are used unlocked
  std::uint64_t blocks_unlocked = 0;  // blocks held now that are not locked
  std::uint64_t blocks_retired = 0;   // shared blocks freed on release instead of kept (their name is gone)
  // Traffic of host-staged links: bytes that crossed pinned host memory. On the simulator each staged
  // transfer acquires a block of its bytes (counted at acquisition); on GPUs each kernel launch adds the
  // bytes its plan moves to or from scratch held in pinned host memory (PinnedHostPool::recordStaged),
  // and the region's own block is not traffic (acquired as kResident).
  std::uint64_t bytes_staged = 0;
  std::uint64_t staged_operations = 0;  // GPU kernel launches that moved bytes through pinned host memory

  friend bool operator==(const PinnedStats&, const PinnedStats&) = default;
};

// Statistics of one registration cache (user buffers exported to peers).
struct RegistrationStats {
  std::uint64_t entries = 0;           // allocations registered now
  std::uint64_t registered_bytes = 0;  // their total size
  std::uint64_t registrations = 0;     // successful registerBuffer calls
  std::uint64_t hits = 0;              // ... served by an existing entry (no new export)
  std::uint64_t exports = 0;           // ... that exported a new allocation
  std::uint64_t releases = 0;          // entries released (refcount reached zero, or releaseAll)
  std::uint64_t failures = 0;

  friend bool operator==(const RegistrationStats&, const RegistrationStats&) = default;
};

// One line each, "key=value ..." (peerreduce-sim prints these).
std::string describe(const PoolStats& stats);
std::string describe(const PinnedStats& stats);
std::string describe(const RegistrationStats& stats);

// The memory settings of a communicator. Every rank of a world must use the same values (the pool is
// symmetric): they belong to the configuration fingerprint.
struct MemorySettings {
  std::size_t pool_bytes = kDefaultPoolBytes;                     // PEERREDUCE_POOL_BYTES
  std::size_t pool_quota_bytes = 0;                               // PEERREDUCE_POOL_QUOTA_BYTES; 0 = no quota
  std::size_t pool_alignment_bytes = kDefaultPoolAlignmentBytes;  // PEERREDUCE_POOL_ALIGNMENT
  double defrag_threshold = kDefaultDefragThreshold;              // PEERREDUCE_POOL_DEFRAG_THRESHOLD
  std::size_t pinned_limit_bytes = kDefaultPinnedLimitBytes;      // PEERREDUCE_PINNED_LIMIT_BYTES

  // `base` with the PEERREDUCE_* variables above applied, then validated. `getenv` is injectable.
  static StatusOr<MemorySettings> fromEnvironment(const MemorySettings& base,
                                                  const std::function<const char*(const char*)>& getenv = nullptr);
  // kInvalidArgument naming the first setting out of range, its value, the accepted range and the
  // environment variable.
  Status validate() const;
  std::string describe() const;

  friend bool operator==(const MemorySettings&, const MemorySettings&) = default;
};

// A block of a communicator's symmetric pool held by the application (Communicator::allocateSymmetric):
// the same offset and size on every rank, never moved by defragmentation. Copies share the block; it
// returns to the pool when the last copy is dropped (reset() or destruction), so it cannot be freed
// twice. It may outlive its communicator: the pool's books stay alive with it. Same thread rules as the
// Communicator: drop copies on the thread that uses it.
//
// Where the transport's region is host-addressable (the simulator), data() and bytes() reach this rank's
// bytes of the block; on device memory data() is null and bytes() says kUnsupported. The pointer stays
// valid while the transport lives (the region is the transport's, not the block's).
class SymmetricBlock {
 public:
  SymmetricBlock() = default;
  bool valid() const { return holder_ != nullptr; }
  std::size_t offset() const { return offset_; }  // in every rank's symmetric region
  std::size_t size() const { return size_; }      // the request rounded up to 16 bytes
  // This rank's first byte of the block, or null (no host-addressable region, or an empty handle).
  std::byte* data() const { return local_; }
  // [offset, offset + length) of this rank's block. kInvalidArgument when the range leaves the block
  // (overflow included) or the handle is empty; kUnsupported when the region is not host-addressable.
  StatusOr<std::span<std::byte>> bytes(std::size_t offset, std::size_t length) const;
  void reset() {
    holder_.reset();
    offset_ = 0;
    size_ = 0;
    local_ = nullptr;
  }

 private:
  friend class Communicator;
  SymmetricBlock(std::shared_ptr<const void> holder, std::size_t offset, std::size_t size, std::byte* local)
      : holder_(std::move(holder)), offset_(offset), size_(size), local_(local) {}
  std::shared_ptr<const void> holder_;  // the pool block (an internal handle), type-erased
  std::size_t offset_ = 0;
  std::size_t size_ = 0;
  std::byte* local_ = nullptr;  // region base + offset_, when the region is host-addressable
};

}  // namespace peerreduce
