#include "memory/symmetric_pool.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "memory/pool_messages.h"

namespace peerreduce {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// Callers keep x <= capacity <= kMaxPoolBytes (2^36) and a <= 2 MiB, so neither helper can overflow.
std::size_t alignUp(std::size_t x, std::size_t a) { return (x + a - 1) & ~(a - 1); }
std::size_t alignDown(std::size_t x, std::size_t a) { return x & ~(a - 1); }

bool isValidKind(BlockKind kind) {
  switch (kind) {
    case BlockKind::kScratch:
    case BlockKind::kFlags:
    case BlockKind::kUserBuffer:
      return true;
  }
  return false;
}

bool isMovable(BlockKind kind) { return kind == BlockKind::kScratch; }

Status checkAlignment(std::size_t alignment) {
  if (!isPowerOfTwo(alignment) || alignment < kMinPoolAlignmentBytes || alignment > kMaxPoolAlignmentBytes) {
    return invalidArgumentError("alignment " + std::to_string(alignment) + " is not a power of two in " +
                                std::to_string(kMinPoolAlignmentBytes) + ".." + std::to_string(kMaxPoolAlignmentBytes) +
                                " bytes");
  }
  return Status::ok();
}

Status validateOptions(const SymmetricPoolOptions& o) {
  const std::size_t g = o.region_granularity_bytes;
  if (!isPowerOfTwo(g) || g < kMinPoolAlignmentBytes || g > kIpcGranularityBytes) {
    return invalidArgumentError("region granularity " + std::to_string(g) + " is not a power of two in " +
                                std::to_string(kMinPoolAlignmentBytes) + ".." + std::to_string(kIpcGranularityBytes) +
                                " bytes");
  }
  if (o.capacity_bytes == 0 || o.capacity_bytes % g != 0 || o.capacity_bytes > kMaxPoolBytes) {
    return invalidArgumentError("pool capacity " + std::to_string(o.capacity_bytes) +
                                " bytes is not a positive multiple of the region granularity (" + std::to_string(g) +
                                " bytes) up to " + std::to_string(kMaxPoolBytes) + " (PEERREDUCE_POOL_BYTES)");
  }
  if (Status s = checkAlignment(o.default_alignment_bytes); !s.isOk()) {
    return s.withContext("default pool alignment (PEERREDUCE_POOL_ALIGNMENT)");
  }
  if (o.quota_bytes > o.capacity_bytes) {
    return invalidArgumentError("pool quota " + std::to_string(o.quota_bytes) + " bytes exceeds the pool capacity " +
                                std::to_string(o.capacity_bytes) + " (PEERREDUCE_POOL_QUOTA_BYTES; 0 = no quota)");
  }
  if (!(o.defrag_threshold >= 0.0 && o.defrag_threshold <= 1.0)) {  // also rejects NaN
    return invalidArgumentError("defragmentation threshold " + std::to_string(o.defrag_threshold) +
                                " is outside 0..1 (PEERREDUCE_POOL_DEFRAG_THRESHOLD)");
  }
  if (o.max_blocks == 0 || o.max_blocks > kMaxPoolMaxBlocks) {
    return invalidArgumentError("max_blocks " + std::to_string(o.max_blocks) + " is outside 1.." +
                                std::to_string(kMaxPoolMaxBlocks));
  }
  return Status::ok();
}

}  // namespace

SymmetricPoolOptions SymmetricPoolOptions::fromSettings(const MemorySettings& settings, int rank) {
  SymmetricPoolOptions o;
  o.capacity_bytes = settings.pool_bytes;
  o.region_granularity_bytes = kIpcGranularityBytes;
  o.default_alignment_bytes = settings.pool_alignment_bytes;
  o.quota_bytes = settings.pool_quota_bytes;
  o.defrag_threshold = settings.defrag_threshold;
  o.rank = rank;
  return o;
}

namespace detail {

// The bookkeeping. Ranges of the region are segments (allocated or free) in a doubly linked list in
// address order; allocated segments point to a slot (the handles' target: refcount, alignment, kind),
// so a block keeps its slot when compaction gives it another segment. Free segments are also keys in
// `free_`, sorted by (size, offset): best fit is a binary search. All tables reserve their capacity at creation.
//
// Table sizes: with free neighbours always coalesced, A allocated segments leave at most A + 1 free
// ones, so 2 * max_blocks + 1 segments and max_blocks + 1 free keys always suffice.
class PoolState {
 public:
  explicit PoolState(const SymmetricPoolOptions& options) : options_(options) {
    // Capacity is reserved now, so no later call allocates; entries are made on first use (a fresh
    // index when no returned one is spare), which keeps creation cheap for large max_blocks.
    const std::size_t max_blocks = options.max_blocks;
    segments_.reserve(2 * max_blocks + 1);
    spare_segments_.reserve(2 * max_blocks + 1);
    slots_.reserve(max_blocks);
    spare_slots_.reserve(max_blocks);
    free_ = std::make_unique_for_overwrite<FreeKey[]>(max_blocks + 1);
    quota_ = options.quota_bytes == 0 ? options.capacity_bytes : options.quota_bytes;
    head_ = newSegment();
    segments_[head_] = Segment{0, options.capacity_bytes, kNone, kNone, kNone};
    insertFreeKey(head_);
  }

  const SymmetricPoolOptions& options() const { return options_; }

  // Returns the slot of the new block, or kNone with *error set.
  std::uint32_t allocate(std::size_t preferred, std::size_t minimum, std::size_t alignment, BlockKind kind,
                         bool best_effort, Status* error) {
    if (live_blocks_ == options_.max_blocks) {
      ++failed_allocations_;
      *error = outOfMemoryError(rankPrefix(options_.rank) + "symmetric pool holds its maximum of " +
                                std::to_string(options_.max_blocks) + " live blocks (max_blocks) while asked for " +
                                std::to_string(preferred) + " bytes of " + blockKindName(kind) +
                                "; release blocks or raise SymmetricPoolOptions::max_blocks");
      return kNone;
    }
    const std::size_t quota_left = quota_ > bytes_in_use_ ? quota_ - bytes_in_use_ : 0;
    // preferred <= capacity keeps the rounding below from overflowing.
    if (preferred <= options_.capacity_bytes) {
      const std::size_t need = alignUp(preferred, kMinPoolAlignmentBytes);
      if (need <= quota_left) {
        const std::uint32_t seg = findBestFit(need, alignment);
        if (seg != kNone) return place(seg, need, alignment, kind);
      }
    }
    const std::size_t min_need =
        minimum <= options_.capacity_bytes ? alignUp(minimum, kMinPoolAlignmentBytes) : options_.capacity_bytes + 1;
    if (best_effort && min_need <= options_.capacity_bytes) {
      const std::size_t got = alignDown(std::min(largestAlignedFit(alignment), quota_left), kMinPoolAlignmentBytes);
      if (got >= min_need) {
        const std::uint32_t seg = findBestFit(got, alignment);
        if (seg != kNone) return place(seg, got, alignment, kind);  // always found: largestAlignedFit saw one
      }
    }
    ++failed_allocations_;
    // Which setting to name: the quota when it is set and too small, the pool size when no free block
    // holds the request whatever the quota, both when both hold.
    const bool quota_bound = quota_ < options_.capacity_bytes && min_need > quota_left;
    const bool capacity_bound = min_need > options_.capacity_bytes || largestAlignedFit(alignment) < min_need;
    *error = exhaustionError(best_effort ? minimum : preferred, preferred, alignment, kind, best_effort, quota_bound,
                             capacity_bound);
    return kNone;
  }

  void retain(std::uint32_t slot) {
    Slot& s = slots_[slot];
    if (isMovable(s.kind) && s.refs == 1) --idle_movable_;
    ++s.refs;  // a uint32 overflows only past 4e9 handles of 24 bytes each: 96 GiB of handles
  }

  void release(std::uint32_t slot) {
    Slot& s = slots_[slot];
    --s.refs;
    if (isMovable(s.kind) && s.refs == 1) ++idle_movable_;
    if (s.refs > 0) return;
    if (isMovable(s.kind)) --idle_movable_;  // it was idle at one reference
    const std::uint32_t seg = s.segment;
    bytes_in_use_ -= segments_[seg].size;
    --live_blocks_;
    releaseSegment(seg);
    spare_slots_.push_back(slot);
    // Automatic compaction fires when fragmentation crosses the threshold upwards and re-arms once it
    // falls to half of it: where fixed blocks keep fragmentation high, a pass cannot help, and running
    // one on every release would cost O(blocks) each time.
    const double fragmentation_now = fragmentation();
    if (fragmentation_now <= options_.defrag_threshold * kDefragRearmFraction) {
      defrag_armed_ = true;
    } else if (defrag_armed_ && idle_movable_ > 0 && fragmentation_now >= options_.defrag_threshold &&
               options_.defrag_threshold < 1.0) {
      defrag_armed_ = false;
      compact(nullptr);
    }
  }

  // One compaction pass. Each idle movable block, in ascending offset order, is freed and re-placed at
  // the lowest offset where it fits (never above where it was: its own range still fits). The walk
  // visits every segment at most once: moved blocks land below the cursor.
  void compact(std::vector<BlockMove>* moves) {
    ++defragmentations_;
    std::uint32_t cur = head_;
    for (std::size_t visited = 0; cur != kNone && visited < segments_.size(); ++visited) {
      const Segment& seg = segments_[cur];
      if (seg.slot == kNone || !isMovable(slots_[seg.slot].kind) || slots_[seg.slot].refs != 1) {
        cur = seg.next;
        continue;
      }
      // The next allocated segment: a free neighbour is followed by an allocated one (coalescing).
      std::uint32_t next = seg.next;
      if (next != kNone && segments_[next].slot == kNone) next = segments_[next].next;
      const std::uint32_t slot = seg.slot;
      const std::size_t old_offset = seg.offset;
      const std::size_t size = seg.size;
      const std::size_t alignment = slots_[slot].alignment;
      releaseSegment(cur);
      const std::uint32_t target = findLowestFit(size, alignment);
      const std::uint32_t placed = carve(target, alignUp(segments_[target].offset, alignment), size);
      segments_[placed].slot = slot;
      slots_[slot].segment = placed;
      if (segments_[placed].offset != old_offset) {
        ++blocks_moved_;
        bytes_moved_ += size;
        if (moves != nullptr) moves->push_back(BlockMove{old_offset, segments_[placed].offset, size});
      }
      cur = next;
    }
  }

  Status setQuota(std::size_t quota_bytes) {
    if (quota_bytes > options_.capacity_bytes) {
      return invalidArgumentError(rankPrefix(options_.rank) + "pool quota " + std::to_string(quota_bytes) +
                                  " bytes exceeds the pool capacity " + std::to_string(options_.capacity_bytes) +
                                  " (PEERREDUCE_POOL_QUOTA_BYTES; 0 = no quota)");
    }
    quota_ = quota_bytes == 0 ? options_.capacity_bytes : quota_bytes;
    return Status::ok();
  }

  PoolStats stats() const {
    PoolStats st;
    st.capacity_bytes = options_.capacity_bytes;
    st.quota_bytes = quota_;
    st.bytes_in_use = bytes_in_use_;
    st.peak_bytes_in_use = peak_bytes_in_use_;
    st.live_blocks = live_blocks_;
    st.max_live_blocks = options_.max_blocks;
    st.allocations = allocations_;
    st.failed_allocations = failed_allocations_;
    st.free_blocks = free_count_;
    st.largest_free_block_bytes = largestFree();
    st.fragmentation = fragmentation();
    st.defragmentations = defragmentations_;
    st.blocks_moved = blocks_moved_;
    st.bytes_moved = bytes_moved_;
    return st;
  }

  std::vector<BlockInfo> blocks() const {
    std::vector<BlockInfo> out;
    std::uint32_t cur = head_;
    for (std::size_t visited = 0; cur != kNone && visited < segments_.size(); ++visited) {
      const Segment& seg = segments_[cur];
      BlockInfo info;
      info.offset = seg.offset;
      info.size = seg.size;
      info.free = seg.slot == kNone;
      if (!info.free) {
        const Slot& s = slots_[seg.slot];
        info.kind = s.kind;
        info.alignment = s.alignment;
        info.use_count = s.refs;
      }
      out.push_back(info);
      cur = seg.next;
    }
    return out;
  }

  Status checkConsistency() const;

  std::size_t slotOffset(std::uint32_t slot) const { return segments_[slots_[slot].segment].offset; }
  std::size_t slotSize(std::uint32_t slot) const { return segments_[slots_[slot].segment].size; }
  const auto& slot(std::uint32_t index) const { return slots_[index]; }

 private:
  struct Segment {
    std::size_t offset;
    std::size_t size;
    std::uint32_t prev;  // address order; kNone at the ends
    std::uint32_t next;
    std::uint32_t slot;  // kNone when free
  };
  struct Slot {
    std::uint32_t refs = 0;
    std::uint32_t segment = kNone;
    std::size_t alignment = 0;
    BlockKind kind = BlockKind::kScratch;
  };
  struct FreeKey {
    std::size_t size;
    std::size_t offset;
    std::uint32_t segment;
  };
  static bool keyLess(const FreeKey& a, const FreeKey& b) {
    return a.size != b.size ? a.size < b.size : a.offset < b.offset;
  }

  std::size_t largestFree() const { return free_count_ == 0 ? 0 : free_[free_count_ - 1].size; }
  double fragmentation() const {
    const std::size_t total_free = options_.capacity_bytes - bytes_in_use_;
    if (total_free == 0) return 0.0;
    return 1.0 - static_cast<double>(largestFree()) / static_cast<double>(total_free);
  }

  // A new block in free segment `seg`, at its lowest offset aligned to `alignment`.
  std::uint32_t place(std::uint32_t seg, std::size_t size, std::size_t alignment, BlockKind kind) {
    const std::uint32_t placed = carve(seg, alignUp(segments_[seg].offset, alignment), size);
    const std::uint32_t slot = newSlot();  // live < max_blocks was checked
    slots_[slot] = Slot{1, placed, alignment, kind};
    segments_[placed].slot = slot;
    bytes_in_use_ += size;
    peak_bytes_in_use_ = std::max(peak_bytes_in_use_, bytes_in_use_);
    ++live_blocks_;
    ++allocations_;
    if (isMovable(kind)) ++idle_movable_;
    return slot;
  }

  // Smallest free segment holding `size` bytes at an `alignment`-aligned offset; lowest offset among
  // equal sizes. Binary search to the first key of size >= `size`, then at most free_count_ keys.
  std::uint32_t findBestFit(std::size_t size, std::size_t alignment) const {
    const FreeKey probe{size, 0, 0};
    const FreeKey* begin = free_.get();
    const FreeKey* end = begin + free_count_;
    for (const FreeKey* k = std::lower_bound(begin, end, probe, keyLess); k != end; ++k) {
      const std::size_t pad = alignUp(k->offset, alignment) - k->offset;
      if (pad <= k->size && k->size - pad >= size) return k->segment;
    }
    return kNone;
  }

  // Largest block any free segment could hold at `alignment`. Scans from the largest key down and
  // stops once keys are no larger than the best found (a segment holds at most its size).
  std::size_t largestAlignedFit(std::size_t alignment) const {
    std::size_t best = 0;
    for (std::size_t i = free_count_; i > 0; --i) {
      const FreeKey& k = free_[i - 1];
      if (k.size <= best) break;
      const std::size_t pad = alignUp(k.offset, alignment) - k.offset;
      if (pad < k.size) best = std::max(best, k.size - pad);
    }
    return best;
  }

  // Lowest-offset free segment holding `size` bytes aligned; walks the address list (<= all segments).
  std::uint32_t findLowestFit(std::size_t size, std::size_t alignment) const {
    std::uint32_t cur = head_;
    for (std::size_t visited = 0; cur != kNone && visited < segments_.size(); ++visited) {
      const Segment& seg = segments_[cur];
      if (seg.slot == kNone) {
        const std::size_t pad = alignUp(seg.offset, alignment) - seg.offset;
        if (pad <= seg.size && seg.size - pad >= size) return cur;
      }
      cur = seg.next;
    }
    return kNone;
  }

  // Turns [at, at + size) of free segment `seg` into an allocated segment (returned; slot unset).
  // The pieces before and after stay free. Needs at most two spare segments (see the table sizes).
  std::uint32_t carve(std::uint32_t seg, std::size_t at, std::size_t size) {
    removeFreeKey(seg);
    Segment& s = segments_[seg];
    const std::size_t pad = at - s.offset;
    const std::size_t rest = s.size - pad - size;
    if (pad > 0) {
      const std::uint32_t p = newSegment();
      segments_[p] = Segment{s.offset, pad, s.prev, seg, kNone};
      if (s.prev != kNone) {
        segments_[s.prev].next = p;
      } else {
        head_ = p;
      }
      s.prev = p;
      insertFreeKey(p);
    }
    if (rest > 0) {
      const std::uint32_t r = newSegment();
      segments_[r] = Segment{at + size, rest, seg, s.next, kNone};
      if (s.next != kNone) segments_[s.next].prev = r;
      s.next = r;
      insertFreeKey(r);
    }
    s.offset = at;
    s.size = size;
    s.slot = kNone;
    return seg;
  }

  // Frees segment `seg` and coalesces it with free neighbours; `seg` keeps its index.
  void releaseSegment(std::uint32_t seg) {
    Segment& s = segments_[seg];
    s.slot = kNone;
    if (s.prev != kNone && segments_[s.prev].slot == kNone) {
      const std::uint32_t p = s.prev;
      removeFreeKey(p);
      s.offset = segments_[p].offset;
      s.size += segments_[p].size;
      s.prev = segments_[p].prev;
      if (s.prev != kNone) {
        segments_[s.prev].next = seg;
      } else {
        head_ = seg;
      }
      spare_segments_.push_back(p);
    }
    if (s.next != kNone && segments_[s.next].slot == kNone) {
      const std::uint32_t n = s.next;
      removeFreeKey(n);
      s.size += segments_[n].size;
      s.next = segments_[n].next;
      if (s.next != kNone) segments_[s.next].prev = seg;
      spare_segments_.push_back(n);
    }
    insertFreeKey(seg);
  }

  // A returned index when one is spare (most recently returned first), else the next fresh one: the
  // same order as a stack filled with every index, lowest on top, so numbering stays deterministic.
  std::uint32_t newSegment() {
    if (!spare_segments_.empty()) {
      const std::uint32_t seg = spare_segments_.back();
      spare_segments_.pop_back();
      return seg;
    }
    segments_.emplace_back();  // within the reserved capacity: at most 2 * max_blocks + 1 segments exist
    return static_cast<std::uint32_t>(segments_.size() - 1);
  }
  std::uint32_t newSlot() {
    if (!spare_slots_.empty()) {
      const std::uint32_t slot = spare_slots_.back();
      spare_slots_.pop_back();
      return slot;
    }
    slots_.emplace_back();  // within the reserved capacity: at most max_blocks live blocks
    return static_cast<std::uint32_t>(slots_.size() - 1);
  }

  void insertFreeKey(std::uint32_t seg) {
    const FreeKey key{segments_[seg].size, segments_[seg].offset, seg};
    FreeKey* begin = free_.get();
    FreeKey* end = begin + free_count_;
    FreeKey* at = std::upper_bound(begin, end, key, keyLess);
    std::move_backward(at, end, end + 1);  // free_count_ <= max_blocks, so end + 1 is in the table
    *at = key;
    ++free_count_;
  }

  void removeFreeKey(std::uint32_t seg) {
    const FreeKey key{segments_[seg].size, segments_[seg].offset, seg};
    FreeKey* begin = free_.get();
    FreeKey* end = begin + free_count_;
    FreeKey* at = std::lower_bound(begin, end, key, keyLess);
    std::move(at + 1, end, at);
    --free_count_;
  }

  Status exhaustionError(std::size_t asked, std::size_t preferred, std::size_t alignment, BlockKind kind,
                         bool best_effort, bool quota_bound, bool capacity_bound) const {
    const std::size_t free_bytes = options_.capacity_bytes - bytes_in_use_;
    std::string what = best_effort
                           ? "at least " + std::to_string(asked) + " (preferably " + std::to_string(preferred) + ")"
                           : std::to_string(asked);
    std::string message = rankPrefix(options_.rank) + "symmetric pool cannot allocate " + what + " bytes of " +
                          blockKindName(kind) + " aligned to " + std::to_string(alignment) + ": " +
                          std::to_string(free_bytes) + " of " + std::to_string(options_.capacity_bytes) +
                          " bytes free, largest free block " + std::to_string(largestFree()) +
                          " bytes (fragmentation " + std::to_string(fragmentation()) + "), " +
                          std::to_string(bytes_in_use_) + " bytes in use of a quota of " + std::to_string(quota_);
    if (quota_bound && capacity_bound) {
      message += "; raise PEERREDUCE_POOL_QUOTA_BYTES and PEERREDUCE_POOL_BYTES, or release blocks";
    } else if (quota_bound) {
      message += "; raise PEERREDUCE_POOL_QUOTA_BYTES or release blocks";
    } else {
      message += "; raise PEERREDUCE_POOL_BYTES or release blocks";
    }
    return outOfMemoryError(std::move(message));
  }

  SymmetricPoolOptions options_;
  std::vector<Segment> segments_;
  std::vector<std::uint32_t> spare_segments_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> spare_slots_;
  std::unique_ptr<FreeKey[]> free_;  // max_blocks + 1 keys, the first free_count_ in use
  std::size_t free_count_ = 0;
  std::uint32_t head_ = kNone;

  std::size_t quota_ = 0;
  std::size_t bytes_in_use_ = 0;
  std::size_t peak_bytes_in_use_ = 0;
  std::size_t live_blocks_ = 0;
  std::size_t idle_movable_ = 0;  // kScratch blocks with exactly one handle: what compaction may move
  bool defrag_armed_ = true;      // automatic compaction may fire (see release)
  std::uint64_t allocations_ = 0;
  std::uint64_t failed_allocations_ = 0;
  std::uint64_t defragmentations_ = 0;
  std::uint64_t blocks_moved_ = 0;
  std::uint64_t bytes_moved_ = 0;
};

Status PoolState::checkConsistency() const {
  const auto broken = [](const std::string& what) { return internalError("symmetric pool invariant broken: " + what); };
  std::size_t covered = 0;
  std::size_t in_use = 0;
  std::size_t live = 0;
  std::size_t frees = 0;
  std::size_t idle_movable = 0;
  std::size_t segments = 0;
  std::uint32_t prev = kNone;
  bool prev_free = false;
  std::uint32_t cur = head_;
  for (; cur != kNone && segments < segments_.size(); ++segments) {
    const Segment& s = segments_[cur];
    if (s.prev != prev) return broken("prev link of segment at " + std::to_string(s.offset));
    if (s.offset != covered) return broken("gap or overlap at offset " + std::to_string(covered));
    if (s.size == 0 || s.size % kMinPoolAlignmentBytes != 0) return broken("segment size " + std::to_string(s.size));
    const bool is_free = s.slot == kNone;
    if (is_free) {
      if (prev_free) return broken("adjacent free segments at " + std::to_string(s.offset));
      ++frees;
      const FreeKey key{s.size, s.offset, cur};
      const FreeKey* begin = free_.get();
      const FreeKey* end = begin + free_count_;
      const FreeKey* at = std::lower_bound(begin, end, key, keyLess);
      if (at == end || at->segment != cur || at->size != s.size || at->offset != s.offset) {
        return broken("free segment at " + std::to_string(s.offset) + " missing from the index");
      }
    } else {
      const Slot& slot = slots_[s.slot];
      if (slot.segment != cur || slot.refs == 0) return broken("slot of block at " + std::to_string(s.offset));
      if (s.offset % slot.alignment != 0) return broken("misaligned block at " + std::to_string(s.offset));
      in_use += s.size;
      ++live;
      if (isMovable(slot.kind) && slot.refs == 1) ++idle_movable;
    }
    covered += s.size;
    prev_free = is_free;
    prev = cur;
    cur = s.next;
  }
  if (cur != kNone) return broken("address list longer than the table");
  if (covered != options_.capacity_bytes) return broken("segments cover " + std::to_string(covered) + " bytes");
  if (in_use != bytes_in_use_) return broken("bytes in use");
  if (live != live_blocks_ || live + spare_slots_.size() != slots_.size()) return broken("live block count");
  if (frees != free_count_) return broken("free index size");
  if (segments + spare_segments_.size() != segments_.size()) return broken("segment table accounting");
  if (idle_movable != idle_movable_) return broken("idle movable count");
  for (std::size_t i = 1; i < free_count_; ++i) {
    if (!keyLess(free_[i - 1], free_[i])) return broken("free index order");
  }
  return Status::ok();
}

}  // namespace detail

// ---- PoolBlock ----

PoolBlock::PoolBlock(const PoolBlock& other) : state_(other.state_), slot_(other.slot_) {
  if (state_) state_->retain(slot_);
}

PoolBlock& PoolBlock::operator=(const PoolBlock& other) {
  if (this == &other) return *this;
  if (other.state_) other.state_->retain(other.slot_);  // before reset: `other` may share our block
  reset();
  state_ = other.state_;
  slot_ = other.slot_;
  return *this;
}

PoolBlock::PoolBlock(PoolBlock&& other) noexcept : state_(std::move(other.state_)), slot_(other.slot_) {}

PoolBlock& PoolBlock::operator=(PoolBlock&& other) noexcept {
  if (this == &other) return *this;
  reset();
  state_ = std::move(other.state_);
  slot_ = other.slot_;
  return *this;
}

PoolBlock::~PoolBlock() { reset(); }

void PoolBlock::reset() {
  if (!state_) return;
  // Release through a local: the last handle may also be the last owner of the bookkeeping.
  std::shared_ptr<detail::PoolState> state = std::move(state_);
  state->release(slot_);
}

std::size_t PoolBlock::offset() const { return state_ ? state_->slotOffset(slot_) : 0; }
std::size_t PoolBlock::size() const { return state_ ? state_->slotSize(slot_) : 0; }
std::size_t PoolBlock::alignment() const { return state_ ? state_->slot(slot_).alignment : 0; }
BlockKind PoolBlock::kind() const { return state_ ? state_->slot(slot_).kind : BlockKind::kScratch; }
std::uint32_t PoolBlock::useCount() const { return state_ ? state_->slot(slot_).refs : 0; }

StatusOr<std::size_t> offsetOf(const PoolBlock& block, std::size_t byte_offset, std::size_t bytes) {
  if (!block.valid()) return invalidArgumentError("pool view of an empty block handle");
  const std::size_t size = block.size();
  if (byte_offset > size || bytes > size - byte_offset) {
    return invalidArgumentError("pool view [" + std::to_string(byte_offset) + ", +" + std::to_string(bytes) +
                                ") leaves the block of " + std::to_string(size) + " bytes at offset " +
                                std::to_string(block.offset()));
  }
  return block.offset() + byte_offset;  // <= offset + size <= capacity: no overflow
}

// ---- SymmetricPool ----

StatusOr<SymmetricPool> SymmetricPool::create(const SymmetricPoolOptions& options) {
  if (Status s = validateOptions(options); !s.isOk()) return s.withContext(rankPrefix(options.rank) + "symmetric pool");
  return SymmetricPool(std::make_shared<detail::PoolState>(options));
}

SymmetricPool::~SymmetricPool() = default;

StatusOr<PoolBlock> SymmetricPool::allocate(std::size_t bytes, BlockKind kind, std::size_t alignment) {
  return allocateBestEffort(bytes, bytes, kind, alignment);
}

StatusOr<PoolBlock> SymmetricPool::allocateBestEffort(std::size_t preferred, std::size_t minimum, BlockKind kind,
                                                      std::size_t alignment) {
  // Messages are built on error paths only: the success path must not touch the heap.
  const int rank = state_->options().rank;
  if (!isValidKind(kind)) {
    return invalidArgumentError(rankPrefix(rank) + "block kind " + std::to_string(static_cast<int>(kind)) +
                                " is not valid");
  }
  if (minimum == 0) return invalidArgumentError(rankPrefix(rank) + "pool allocation of 0 bytes");
  if (minimum > preferred) {
    return invalidArgumentError(rankPrefix(rank) + "pool allocation minimum " + std::to_string(minimum) +
                                " exceeds the preferred size " + std::to_string(preferred));
  }
  const std::size_t align = alignment == 0 ? state_->options().default_alignment_bytes : alignment;
  if (Status s = checkAlignment(align); !s.isOk()) return s.withContext(rankPrefix(rank) + "pool allocation");
  Status error;
  const std::uint32_t slot = state_->allocate(preferred, minimum, align, kind, minimum != preferred, &error);
  if (slot == kNone) return error;
  return PoolBlock(state_, slot);
}

std::vector<BlockMove> SymmetricPool::defragment() {
  std::vector<BlockMove> moves;
  state_->compact(&moves);
  return moves;
}

Status SymmetricPool::setQuota(std::size_t quota_bytes) { return state_->setQuota(quota_bytes); }
PoolStats SymmetricPool::stats() const { return state_->stats(); }
const SymmetricPoolOptions& SymmetricPool::options() const { return state_->options(); }
std::size_t SymmetricPool::capacity() const { return state_->options().capacity_bytes; }
std::vector<BlockInfo> SymmetricPool::blocks() const { return state_->blocks(); }
Status SymmetricPool::checkConsistency() const { return state_->checkConsistency(); }

// ---- PoolView ----

StatusOr<PoolView> PoolView::create(const SymmetricPool& pool, std::span<std::byte> region) {
  if (region.size() != pool.capacity()) {
    return invalidArgumentError("pool view over " + std::to_string(region.size()) + " bytes of a pool of " +
                                std::to_string(pool.capacity()));
  }
  return PoolView(pool.state_, region);
}

StatusOr<std::span<std::byte>> PoolView::bytes(const PoolBlock& block, std::size_t byte_offset,
                                               std::size_t bytes) const {
  if (block.valid() && block.state_.get() != state_.get()) {
    return invalidArgumentError("pool view of a block that belongs to another pool");
  }
  PR_ASSIGN_OR_RETURN(const std::size_t at, offsetOf(block, byte_offset, bytes));
  return region_.subspan(at, bytes);
}

}  // namespace peerreduce
