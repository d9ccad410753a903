// SymmetricPool: deterministic sub-allocation of one rank's symmetric region (internal).
//
// The transport allocates the region (IPC-shareable device memory on GPUs, host memory on the
// simulator); the pool only keeps the books of offsets in [0, capacity). Every rank of a world runs
// the same sequence of pool calls, and the pool's decisions depend only on that sequence (no pointers,
// no hashing, no clock), so a block gets the same offset on every rank and a peer addresses it as
// "peer region base + offset".
//
// Policy (docs/MEMORY.md has the details and the reasons):
// - Sizes are rounded up to 16 bytes; a block starts at a multiple of its alignment (a power of two,
//   16 bytes .. 2 MiB; 0 asks for the pool's default).
// - Best fit: the smallest free range that holds the aligned block, the lowest offset among equals;
//   the block sits at the lowest aligned offset of that range. Freed ranges coalesce with free
//   neighbours at once, so free ranges never touch.
// - No heap on the hot path: allocate, release (a handle dying), handle copies and automatic
//   compaction use tables made at creation. At most `max_blocks` blocks live at once (kOutOfMemory
//   beyond). Costs: best fit is a binary search plus a scan over free ranges too misaligned to use
//   (O(log F) usually, O(F) worst); inserting or removing a free range moves up to F 24-byte keys
//   (F <= max_blocks + 1 free ranges).
// - Quota: bytes in use never exceed the quota (the capacity when none is set).
// - Compaction (defragment(), or automatically): each idle movable block - kind kScratch with exactly
//   one handle - in ascending offset order is re-placed at the lowest offset where it fits. Flags, user
//   buffers, and scratch with more than one handle never move. A moved block keeps its handle; offset()
//   then returns the new offset. Contents are not copied: scratch has no contents that matter between
//   operations; an owner that needs them copies them using the reported moves, in order, with memmove
//   semantics. A pass costs O(idle movable blocks x ranges).
// - Automatic compaction: a release that leaves fragmentation at or above `defrag_threshold` runs one
//   pass, if an idle movable block exists; then it is disarmed until a release leaves fragmentation at
//   or below kDefragRearmFraction x threshold (a Schmitt trigger: where fixed blocks keep fragmentation
//   high, passes could not help and would cost O(blocks) on every release).
//
// Ownership: PoolBlock handles share ownership of the block (copyable; the block returns to the pool
// when the last copy dies, so nothing is freed twice or while a copy is held) and of the pool's
// bookkeeping (so destroying the SymmetricPool before its handles is safe; the handles stay valid and
// release into the orphaned bookkeeping). The region itself belongs to the transport: drop the handles
// before closing it, their offsets mean nothing afterwards.
//
// Rule for movable blocks: while a kScratch block has a single handle, a release or defragment() on
// the pool may move it. Hold a copy (a "lease") for as long as an offset read from it is in use.
// The communicator keeps one handle per scratch area and copies it for the duration of a submission.
//
// Thread safety: none. One thread at a time uses a pool and its handles (copies and destruction
// included), like the Communicator that owns it.
//
// Example:
//   auto pool = SymmetricPool::create({.capacity_bytes = 64 << 20}).value();
//   auto flags = pool.allocate(4096, BlockKind::kFlags);                       // never moves
//   auto scratch = pool.allocateBestEffort(32 << 20, 1 << 20, BlockKind::kScratch);
//   if (!scratch.isOk()) return scratch.status();  // kOutOfMemory: names PEERREDUCE_POOL_BYTES
//   PoolBlock lease = *scratch;                     // pinned while `lease` lives
//   request.scratch_offset = lease.offset();
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "peerreduce/memory.h"
#include "peerreduce/status.h"

namespace peerreduce {

// 4096 live blocks: a communicator holds a few flag areas, one scratch area per stream and the user
// buffers placed in its pool; 4096 leaves room for thousands of those while the tables (about 128
// bytes per block) stay near 512 KiB per rank.
inline constexpr std::uint32_t kDefaultPoolMaxBlocks = 4096;
// 2^20: keeps the tables at most about 128 MiB and the 32-bit indices far from overflow.
inline constexpr std::uint32_t kMaxPoolMaxBlocks = std::uint32_t{1} << 20;

// Automatic compaction re-arms when fragmentation falls to this fraction of the threshold: half is far
// enough below that fragmentation hovering at the threshold does not trigger a pass per release.
inline constexpr double kDefragRearmFraction = 0.5;

struct SymmetricPoolOptions {
  std::size_t capacity_bytes = kDefaultPoolBytes;  // the region's size (PEERREDUCE_POOL_BYTES)
  // The capacity must be a multiple of this. The IPC granularity on GPUs; the simulator and tests may
  // use a smaller power of two (at least 16 bytes), as host memory has no IPC granules.
  std::size_t region_granularity_bytes = kIpcGranularityBytes;
  std::size_t default_alignment_bytes = kDefaultPoolAlignmentBytes;  // PEERREDUCE_POOL_ALIGNMENT
  std::size_t quota_bytes = 0;                                       // 0 = no quota (PEERREDUCE_POOL_QUOTA_BYTES)
  double defrag_threshold = kDefaultDefragThreshold;                 // 0 .. 1; 1 = never automatically
  std::uint32_t max_blocks = kDefaultPoolMaxBlocks;                  // live blocks at once
  int rank = -1;                                                     // for messages only; < 0 = no rank

  // The pool of a communicator whose settings are `settings` (granularity: the IPC granularity).
  static SymmetricPoolOptions fromSettings(const MemorySettings& settings, int rank);
};

// One block moved by compaction, in the order the moves happened.
struct BlockMove {
  std::size_t old_offset = 0;
  std::size_t new_offset = 0;
  std::size_t size = 0;
  friend bool operator==(const BlockMove&, const BlockMove&) = default;
};

// One range of the pool, for diagnostics and tests (SymmetricPool::blocks()).
struct BlockInfo {
  std::size_t offset = 0;
  std::size_t size = 0;
  bool free = true;
  BlockKind kind = BlockKind::kScratch;  // meaningful when !free
  std::size_t alignment = 0;             // as asked (after defaulting); 0 when free
  std::uint32_t use_count = 0;           // handles; 0 when free
  friend bool operator==(const BlockInfo&, const BlockInfo&) = default;
};

namespace detail {
class PoolState;
}  // namespace detail

// Shared-ownership handle of one pool block. Copy to share (and, for scratch, to pin it in place).
// A default-constructed or moved-from handle is empty: valid() is false, offset() and size() are 0.
class PoolBlock {
 public:
  PoolBlock() = default;
  PoolBlock(const PoolBlock& other);
  PoolBlock& operator=(const PoolBlock& other);
  PoolBlock(PoolBlock&& other) noexcept;
  PoolBlock& operator=(PoolBlock&& other) noexcept;
  ~PoolBlock();

  bool valid() const { return state_ != nullptr; }
  explicit operator bool() const { return valid(); }
  // Offset of the block in every rank's region. Stable while this block is pinned (more than one
  // handle) or is not scratch.
  std::size_t offset() const;
  std::size_t size() const;       // usable bytes: the request rounded up to 16
  std::size_t alignment() const;  // as asked (after defaulting)
  BlockKind kind() const;
  std::uint32_t useCount() const;  // handles sharing this block
  // Drops this handle's share now (the block returns to the pool if it was the last).
  void reset();

 private:
  friend class SymmetricPool;
  friend class PoolView;
  PoolBlock(std::shared_ptr<detail::PoolState> state, std::uint32_t slot) : state_(std::move(state)), slot_(slot) {}

  std::shared_ptr<detail::PoolState> state_;
  std::uint32_t slot_ = 0;
};

// Offset in the region of bytes [byte_offset, byte_offset + bytes) of `block`: kInvalidArgument when
// the handle is empty or the range does not lie inside the block (overflow-checked).
StatusOr<std::size_t> offsetOf(const PoolBlock& block, std::size_t byte_offset, std::size_t bytes);

class SymmetricPool {
 public:
  // Validates `options` (kInvalidArgument naming the setting) and makes the tables: the only heap
  // allocation of the pool's life.
  static StatusOr<SymmetricPool> create(const SymmetricPoolOptions& options);

  SymmetricPool(SymmetricPool&&) noexcept = default;
  SymmetricPool& operator=(SymmetricPool&&) noexcept = default;
  SymmetricPool(const SymmetricPool&) = delete;
  SymmetricPool& operator=(const SymmetricPool&) = delete;
  ~SymmetricPool();

  // A block of `bytes` (rounded up to 16) aligned to `alignment` (0: the default). Errors:
  // kInvalidArgument (size 0, bad alignment or kind; nothing changes) or kOutOfMemory (saying what was
  // asked, what is free, the largest free block and the setting to raise; only failed_allocations
  // changes). Never touches the heap on success.
  StatusOr<PoolBlock> allocate(std::size_t bytes, BlockKind kind, std::size_t alignment = 0);
  // The preferred size if it fits; otherwise the largest size >= minimum that fits (free space and
  // quota), rounded down to 16. kOutOfMemory only when not even `minimum` fits. The allreduce uses this
  // to fall back to a chunked plan through the scratch it can get.
  StatusOr<PoolBlock> allocateBestEffort(std::size_t preferred, std::size_t minimum, BlockKind kind,
                                         std::size_t alignment = 0);
  // One compaction pass now (see the file comment); returns the moves in the order made.
  std::vector<BlockMove> defragment();
  // 0 = no quota. kInvalidArgument above the capacity. A quota below the bytes in use is allowed:
  // live blocks stay, new allocations fail until enough is released.
  Status setQuota(std::size_t quota_bytes);

  PoolStats stats() const;
  const SymmetricPoolOptions& options() const;
  std::size_t capacity() const;
  // Every range (free and allocated) in address order. Allocates; diagnostics and tests only.
  std::vector<BlockInfo> blocks() const;
  // Checks the internal structures against each other (kInternal naming the broken invariant).
  Status checkConsistency() const;

 private:
  friend class PoolView;
  explicit SymmetricPool(std::shared_ptr<detail::PoolState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::PoolState> state_;
};

// Host-visible view of a region (the simulator's host memory): bounds-checked spans of pool blocks.
class PoolView {
 public:
  // `region` must be exactly the pool's capacity long.
  static StatusOr<PoolView> create(const SymmetricPool& pool, std::span<std::byte> region);
  // Bytes [byte_offset, byte_offset + bytes) of `block`; kInvalidArgument when the handle is empty,
  // belongs to another pool, or the range leaves the block.
  StatusOr<std::span<std::byte>> bytes(const PoolBlock& block, std::size_t byte_offset, std::size_t bytes) const;

 private:
  PoolView(std::shared_ptr<const detail::PoolState> state, std::span<std::byte> region)
      : state_(std::move(state)), region_(region) {}
  std::shared_ptr<const detail::PoolState> state_;
  std::span<std::byte> region_;
};

}  // namespace peerreduce
