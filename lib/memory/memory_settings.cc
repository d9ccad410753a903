// MemorySettings (environment and validation) and the one-line descriptions of the memory statistics.
#include <cstdlib>
#include <string>

#include "peerreduce/memory.h"
#include "util/parse.h"

namespace peerreduce {
namespace {

const char* systemGetenv(const char* name) { return std::getenv(name); }

bool isPowerOfTwo(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

// Longest threshold text accepted: "0." followed by 17 digits already resolves every double in 0..1.
constexpr std::size_t kMaxThresholdChars = 20;

// A decimal fraction in plain notation ("0", "1", "0.5", ".25", "1.0"), parsed digit by digit so the
// result does not depend on the C locale's decimal point.
StatusOr<double> parseThreshold(const std::string& text, const char* what) {
  const auto bad = [&]() {
    return invalidArgumentError(std::string(what) + "='" + text + "' is not a number in 0..1 such as 0.5");
  };
  if (text.empty() || text.size() > kMaxThresholdChars) return bad();
  double whole = 0.0;
  double fraction = 0.0;
  double scale = 1.0;
  bool seen_point = false;
  bool seen_digit = false;
  for (char c : text) {  // bounded by kMaxThresholdChars
    if (c == '.' && !seen_point) {
      seen_point = true;
    } else if (c >= '0' && c <= '9') {
      seen_digit = true;
      if (seen_point) {
        scale *= 10.0;
        fraction = fraction * 10.0 + (c - '0');
      } else {
        whole = whole * 10.0 + (c - '0');
      }
    } else {
      return bad();
    }
  }
  if (!seen_digit) return bad();
  return whole + fraction / scale;
}

Status applyByteSize(const char* name, const char* value, std::size_t* out) {
  auto bytes = parseByteSize(value);
  if (!bytes.isOk()) return bytes.status().withContext(name);
  *out = *bytes;
  return Status::ok();
}

}  // namespace

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

StatusOr<MemorySettings> MemorySettings::fromEnvironment(const MemorySettings& base,
                                                         const std::function<const char*(const char*)>& getenv) {
  const auto read = [&](const char* name) -> const char* {
    const char* v = getenv ? getenv(name) : systemGetenv(name);
    return v != nullptr && *v != '\0' ? v : nullptr;
  };
  MemorySettings settings = base;
  if (const char* v = read("PEERREDUCE_POOL_BYTES")) {
    PR_RETURN_IF_ERROR(applyByteSize("PEERREDUCE_POOL_BYTES", v, &settings.pool_bytes));
  }
  if (const char* v = read("PEERREDUCE_POOL_QUOTA_BYTES")) {
    PR_RETURN_IF_ERROR(applyByteSize("PEERREDUCE_POOL_QUOTA_BYTES", v, &settings.pool_quota_bytes));
  }
  if (const char* v = read("PEERREDUCE_POOL_ALIGNMENT")) {
    PR_RETURN_IF_ERROR(applyByteSize("PEERREDUCE_POOL_ALIGNMENT", v, &settings.pool_alignment_bytes));
  }
  if (const char* v = read("PEERREDUCE_POOL_DEFRAG_THRESHOLD")) {
    PR_ASSIGN_OR_RETURN(settings.defrag_threshold, parseThreshold(v, "PEERREDUCE_POOL_DEFRAG_THRESHOLD"));
  }
  if (const char* v = read("PEERREDUCE_PINNED_LIMIT_BYTES")) {
    PR_RETURN_IF_ERROR(applyByteSize("PEERREDUCE_PINNED_LIMIT_BYTES", v, &settings.pinned_limit_bytes));
  }
  PR_RETURN_IF_ERROR(settings.validate());
  return settings;
}

Status MemorySettings::validate() const {
  if (pool_bytes < kMinPoolBytes || pool_bytes > kMaxPoolBytes || pool_bytes % kIpcGranularityBytes != 0) {
    return invalidArgumentError("pool size of " + std::to_string(pool_bytes) + " bytes is not a multiple of " +
                                std::to_string(kIpcGranularityBytes) +
                                " (the CUDA/HIP IPC allocation granularity) in " + std::to_string(kMinPoolBytes) +
                                ".." + std::to_string(kMaxPoolBytes) + " (PEERREDUCE_POOL_BYTES)");
  }
  if (pool_quota_bytes > pool_bytes) {
    return invalidArgumentError("pool quota of " + std::to_string(pool_quota_bytes) +
                                " bytes exceeds the pool size of " + std::to_string(pool_bytes) +
                                " (PEERREDUCE_POOL_QUOTA_BYTES; 0 = no quota, or raise PEERREDUCE_POOL_BYTES)");
  }
  if (!isPowerOfTwo(pool_alignment_bytes) || pool_alignment_bytes < kMinPoolAlignmentBytes ||
      pool_alignment_bytes > kMaxPoolAlignmentBytes) {
    return invalidArgumentError("pool alignment of " + std::to_string(pool_alignment_bytes) +
                                " bytes is not a power of two in " + std::to_string(kMinPoolAlignmentBytes) + ".." +
                                std::to_string(kMaxPoolAlignmentBytes) + " (PEERREDUCE_POOL_ALIGNMENT)");
  }
  if (!(defrag_threshold >= 0.0 && defrag_threshold <= 1.0)) {  // also rejects NaN
    return invalidArgumentError("defragmentation threshold " + std::to_string(defrag_threshold) +
                                " is outside 0..1 (PEERREDUCE_POOL_DEFRAG_THRESHOLD; 1 = never automatically)");
  }
  if (pinned_limit_bytes < kMinPinnedLimitBytes || pinned_limit_bytes > kMaxPinnedLimitBytes) {
    return invalidArgumentError("pinned host memory limit of " + std::to_string(pinned_limit_bytes) +
                                " bytes is outside " + std::to_string(kMinPinnedLimitBytes) + ".." +
                                std::to_string(kMaxPinnedLimitBytes) + " (PEERREDUCE_PINNED_LIMIT_BYTES)");
  }
  return Status::ok();
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
         " lock_failures=" + std::to_string(s.lock_failures) + " blocks_unlocked=" + std::to_string(s.blocks_unlocked);
}

std::string describe(const RegistrationStats& s) {
  return "entries=" + std::to_string(s.entries) + " registered_bytes=" + std::to_string(s.registered_bytes) +
         " registrations=" + std::to_string(s.registrations) + " hits=" + std::to_string(s.hits) +
         " exports=" + std::to_string(s.exports) + " releases=" + std::to_string(s.releases) +
         " failures=" + std::to_string(s.failures);
}

}  // namespace peerreduce
