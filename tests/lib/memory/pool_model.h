// A reference model of SymmetricPool for the stateful tests: the same policy written the simplest way
// (blocks in a map, free ranges recomputed as the gaps between them, linear scans everywhere), so
// that it can be trusted by reading it. The model predicts exact offsets, moves and statistics.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "memory/symmetric_pool.h"

namespace peerreduce::testing {

enum class PoolOutcome { kOk, kInvalid, kQuota, kCapacity, kQuotaAndCapacity, kLimit };

struct ModelBlock {
  std::size_t offset = 0;
  std::size_t size = 0;
  std::size_t alignment = 0;
  BlockKind kind = BlockKind::kScratch;
  int refs = 0;
};

struct PoolModel {
  SymmetricPoolOptions options;
  std::size_t quota = 0;             // effective
  std::map<int, ModelBlock> blocks;  // by model id
  int next_id = 0;
  std::vector<int> handles;  // handle i refers to block handles[i]
  std::uint64_t peak = 0;
  std::uint64_t allocations = 0;
  std::uint64_t failed = 0;
  std::uint64_t defragmentations = 0;
  std::uint64_t blocks_moved = 0;
  std::uint64_t bytes_moved = 0;
  bool armed = true;  // automatic compaction
};

struct Gap {
  std::size_t offset = 0;
  std::size_t size = 0;
};

inline std::size_t modelRoundUp(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }
inline std::size_t modelRoundDown(std::size_t x, std::size_t a) { return x / a * a; }
inline bool modelPowerOfTwo(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

inline PoolModel makePoolModel(const SymmetricPoolOptions& options) {
  PoolModel m;
  m.options = options;
  m.quota = options.quota_bytes == 0 ? options.capacity_bytes : options.quota_bytes;
  return m;
}

// Free ranges in address order, ignoring block `skip` (compaction re-places a block that way).
inline std::vector<Gap> modelGaps(const PoolModel& m, int skip = -1) {
  std::vector<std::pair<std::size_t, std::size_t>> used;
  for (const auto& [id, b] : m.blocks) {
    if (id != skip) used.emplace_back(b.offset, b.size);
  }
  std::sort(used.begin(), used.end());
  std::vector<Gap> gaps;
  std::size_t at = 0;
  for (const auto& [offset, size] : used) {
    if (offset > at) gaps.push_back({at, offset - at});
    at = offset + size;
  }
  if (m.options.capacity_bytes > at) gaps.push_back({at, m.options.capacity_bytes - at});
  return gaps;
}

inline std::size_t modelInUse(const PoolModel& m) {
  std::size_t total = 0;
  for (const auto& [id, b] : m.blocks) total += b.size;
  return total;
}

inline bool gapHolds(const Gap& g, std::size_t size, std::size_t alignment) {
  const std::size_t at = modelRoundUp(g.offset, alignment);
  return at + size <= g.offset + g.size;
}

inline PoolStats modelStats(const PoolModel& m) {
  PoolStats s;
  s.capacity_bytes = m.options.capacity_bytes;
  s.quota_bytes = m.quota;
  s.bytes_in_use = modelInUse(m);
  s.peak_bytes_in_use = m.peak;
  s.live_blocks = m.blocks.size();
  s.max_live_blocks = m.options.max_blocks;
  s.allocations = m.allocations;
  s.failed_allocations = m.failed;
  const auto gaps = modelGaps(m);
  s.free_blocks = gaps.size();
  for (const Gap& g : gaps) s.largest_free_block_bytes = std::max<std::uint64_t>(s.largest_free_block_bytes, g.size);
  const std::size_t total_free = m.options.capacity_bytes - s.bytes_in_use;
  s.fragmentation =
      total_free == 0 ? 0.0 : 1.0 - static_cast<double>(s.largest_free_block_bytes) / static_cast<double>(total_free);
  s.defragmentations = m.defragmentations;
  s.blocks_moved = m.blocks_moved;
  s.bytes_moved = m.bytes_moved;
  return s;
}

struct ModelAllocation {
  PoolOutcome outcome = PoolOutcome::kOk;
  std::size_t offset = 0;
  std::size_t size = 0;
};

// allocate (minimum == preferred) or allocateBestEffort, applied to the model.
inline ModelAllocation modelAllocate(PoolModel& m, std::size_t preferred, std::size_t minimum, std::size_t alignment,
                                     BlockKind kind) {
  const std::size_t align = alignment == 0 ? m.options.default_alignment_bytes : alignment;
  if (minimum == 0 || minimum > preferred || !modelPowerOfTwo(align) || align < 16 || align > (std::size_t{2} << 20)) {
    return {PoolOutcome::kInvalid};
  }
  if (m.blocks.size() == m.options.max_blocks) {
    ++m.failed;
    return {PoolOutcome::kLimit};
  }
  const std::size_t cap = m.options.capacity_bytes;
  const std::size_t in_use = modelInUse(m);
  const std::size_t quota_left = m.quota > in_use ? m.quota - in_use : 0;
  const auto gaps = modelGaps(m);
  // Best fit for `size`: smallest gap that holds it aligned, lowest offset among equal sizes.
  const auto bestFit = [&](std::size_t size) -> const Gap* {
    const Gap* best = nullptr;
    for (const Gap& g : gaps) {
      if (gapHolds(g, size, align) && (best == nullptr || g.size < best->size)) best = &g;
    }
    return best;
  };
  std::size_t size = 0;
  const Gap* where = nullptr;
  if (preferred <= cap && modelRoundUp(preferred, 16) <= quota_left) {
    size = modelRoundUp(preferred, 16);
    where = bestFit(size);
  }
  const bool best_effort = minimum != preferred;
  const std::size_t min_need = minimum <= cap ? modelRoundUp(minimum, 16) : cap + 1;
  if (where == nullptr && best_effort && min_need <= cap) {
    std::size_t largest = 0;
    for (const Gap& g : gaps) {
      const std::size_t at = modelRoundUp(g.offset, align);
      if (at < g.offset + g.size) largest = std::max(largest, g.offset + g.size - at);
    }
    size = modelRoundDown(std::min(largest, quota_left), 16);
    if (size >= min_need) where = bestFit(size);
  }
  if (where == nullptr) {
    ++m.failed;
    const bool quota_bound = m.quota < cap && min_need > quota_left;
    bool capacity_bound = min_need > cap;
    if (!capacity_bound) {
      capacity_bound =
          std::none_of(gaps.begin(), gaps.end(), [&](const Gap& g) { return gapHolds(g, min_need, align); });
    }
    if (quota_bound && capacity_bound) return {PoolOutcome::kQuotaAndCapacity};
    return {quota_bound ? PoolOutcome::kQuota : PoolOutcome::kCapacity};
  }
  ModelBlock b;
  b.offset = modelRoundUp(where->offset, align);
  b.size = size;
  b.alignment = align;
  b.kind = kind;
  b.refs = 1;
  const int id = m.next_id++;
  m.blocks[id] = b;
  m.handles.push_back(id);
  ++m.allocations;
  m.peak = std::max<std::uint64_t>(m.peak, modelInUse(m));
  return {PoolOutcome::kOk, b.offset, b.size};
}

inline bool modelIdleMovable(const ModelBlock& b) { return b.kind == BlockKind::kScratch && b.refs == 1; }

// One compaction pass: idle movable blocks in ascending offset order, each to the lowest offset where
// it fits once it is taken out.
inline std::vector<BlockMove> modelCompact(PoolModel& m) {
  ++m.defragmentations;
  std::vector<std::pair<std::size_t, int>> order;
  for (const auto& [id, b] : m.blocks) {
    if (modelIdleMovable(b)) order.emplace_back(b.offset, id);
  }
  std::sort(order.begin(), order.end());
  std::vector<BlockMove> moves;
  for (const auto& [offset, id] : order) {
    ModelBlock& b = m.blocks[id];
    for (const Gap& g : modelGaps(m, id)) {
      if (!gapHolds(g, b.size, b.alignment)) continue;
      const std::size_t at = modelRoundUp(g.offset, b.alignment);
      if (at != b.offset) {
        moves.push_back({b.offset, at, b.size});
        ++m.blocks_moved;
        m.bytes_moved += b.size;
        b.offset = at;
      }
      break;
    }
  }
  return moves;
}

inline void modelCopyHandle(PoolModel& m, std::size_t index) {
  const int id = m.handles[index];
  ++m.blocks[id].refs;
  m.handles.push_back(id);
}

// Drops handle `index`; a block whose last handle goes is freed, and may trigger compaction.
inline void modelDropHandle(PoolModel& m, std::size_t index) {
  const int id = m.handles[index];
  m.handles.erase(m.handles.begin() + static_cast<std::ptrdiff_t>(index));
  if (--m.blocks[id].refs > 0) return;
  m.blocks.erase(id);
  // Fires on crossing the threshold, re-arms at half of it (kDefragRearmFraction).
  const double fragmentation = modelStats(m).fragmentation;
  const double threshold = m.options.defrag_threshold;
  const bool any_idle_movable =
      std::any_of(m.blocks.begin(), m.blocks.end(), [](const auto& kv) { return modelIdleMovable(kv.second); });
  if (fragmentation <= threshold * 0.5) {
    m.armed = true;
  } else if (m.armed && any_idle_movable && threshold < 1.0 && fragmentation >= threshold) {
    m.armed = false;
    modelCompact(m);
  }
}

}  // namespace peerreduce::testing
