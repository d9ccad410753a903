// The one-line descriptions of the memory settings and statistics. MemorySettings' environment and
// validation are the settings registry's (lib/config/memory_settings_rules.cc).
#include <string>

#include "peerreduce/memory.h"

namespace peerreduce {

const char* blockKindName(BlockKind kind) {
  switch (kind) {
    case BlockKind::kScratch:
      return "scratch";
    case BlockKind::kFlags:
      return "flags";
    case BlockKind::kUserBuffer:
      return "user buffer";
  }
  return "unknown kind";
}

std::string MemorySettings::describe() const {
  return "pool_bytes=" + std::to_string(pool_bytes) + " pool_quota_bytes=" + std::to_string(pool_quota_bytes) +
         " pool_alignment_bytes=" + std::to_string(pool_alignment_bytes) +
         " defrag_threshold=" + std::to_string(defrag_threshold) +
         " pinned_limit_bytes=" + std::to_string(pinned_limit_bytes);
}

std::string describe(const PoolStats& s) {
  return "capacity_bytes=" + std::to_string(s.capacity_bytes) + " quota_bytes=" + std::to_string(s.quota_bytes) +
         " bytes_in_use=" + std::to_string(s.bytes_in_use) +
         " peak_bytes_in_use=" + std::to_string(s.peak_bytes_in_use) + " live_blocks=" + std::to_string(s.live_blocks) +
         "/" + std::to_string(s.max_live_blocks) + " allocations=" + std::to_string(s.allocations) +
         " failed_allocations=" + std::to_string(s.failed_allocations) +
         " free_blocks=" + std::to_string(s.free_blocks) +
         " largest_free_block_bytes=" + std::to_string(s.largest_free_block_bytes) +
         " fragmentation=" + std::to_string(s.fragmentation) +
         " defragmentations=" + std::to_string(s.defragmentations) + " blocks_moved=" + std::to_string(s.blocks_moved) +
         " bytes_moved=" + std::to_string(s.bytes_moved);
}

std::string describe(const PinnedStats& s) {
  return "limit_bytes=" + std::to_string(s.limit_bytes) + " bytes_pinned=" + std::to_string(s.bytes_pinned) +
         " peak_bytes_pinned=" + std::to_string(s.peak_bytes_pinned) +
         " bytes_in_use=" + std::to_string(s.bytes_in_use) + " bytes_idle=" + std::to_string(s.bytes_idle) +
         " blocks_in_use=" + std::to_string(s.blocks_in_use) + " blocks_idle=" + std::to_string(s.blocks_idle) +
         " acquisitions=" + std::to_string(s.acquisitions) + " reuses=" + std::to_string(s.reuses) +
         " system_allocations=" + std::to_string(s.system_allocations) + " evictions=" + std::to_string(s.evictions) +
         " bytes_evicted=" + std::to_string(s.bytes_evicted) + " failures=" + std::to_string(s.failures) +
         " lock_failures=" + std::to_string(s.lock_failures) + " blocks_unlocked=" + std::to_string(s.blocks_unlocked) +
         " bytes_staged=" + std::to_string(s.bytes_staged);
}

std::string describe(const RegistrationStats& s) {
  return "entries=" + std::to_string(s.entries) + " registered_bytes=" + std::to_string(s.registered_bytes) +
         " registrations=" + std::to_string(s.registrations) + " hits=" + std::to_string(s.hits) +
         " exports=" + std::to_string(s.exports) + " releases=" + std::to_string(s.releases) +
         " failures=" + std::to_string(s.failures);
}

}  // namespace peerreduce
