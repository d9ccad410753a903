#include "memory/registration_cache.h"

#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

#include "memory/pool_messages.h"
#include "peerreduce/types.h"

namespace peerreduce {
namespace {

std::string describeRange(std::uintptr_t base, std::size_t bytes) {
  return "[" + std::to_string(base) + ", +" + std::to_string(bytes) + ")";
}

}  // namespace

StatusOr<std::unique_ptr<RegistrationCache>> RegistrationCache::create(std::shared_ptr<AllocationResolver> resolver,
                                                                       std::shared_ptr<HandleExporter> exporter,
                                                                       std::size_t max_entries, int rank) {
  if (!resolver || !exporter) {
    return invalidArgumentError(rankPrefix(rank) + "registration cache needs an allocation resolver and an exporter");
  }
  if (max_entries == 0) return invalidArgumentError(rankPrefix(rank) + "registration cache with max_entries 0");
  return std::unique_ptr<RegistrationCache>(
      new RegistrationCache(std::move(resolver), std::move(exporter), max_entries, rank));
}

RegistrationCache::RegistrationCache(std::shared_ptr<AllocationResolver> resolver,
                                     std::shared_ptr<HandleExporter> exporter, std::size_t max_entries, int rank)
    : resolver_(std::move(resolver)), exporter_(std::move(exporter)), max_entries_(max_entries), rank_(rank) {}

RegistrationCache::~RegistrationCache() { releaseAll(); }

std::map<std::uintptr_t, RegistrationCache::Entry>::const_iterator RegistrationCache::find(std::uintptr_t p,
                                                                                           std::size_t n) const {
  auto it = entries_.upper_bound(p);  // entries never overlap: only the one below p can contain it
  if (it == entries_.begin()) return entries_.end();
  --it;
  return it->second.allocation.contains(p, n) ? it : entries_.end();
}

StatusOr<Registration> RegistrationCache::registerBuffer(const void* ptr, std::size_t bytes) {
  const auto p = reinterpret_cast<std::uintptr_t>(ptr);
  const auto fail = [&](Status s) {
    ++stats_.failures;
    return s;
  };
  if (ptr == nullptr || bytes == 0 || bytes > UINTPTR_MAX - p) {
    return fail(invalidArgumentError(rankPrefix(rank_) + "cannot register buffer " + describeRange(p, bytes) +
                                     ": null, empty, or past the end of the address space"));
  }
  if (auto found = find(p, bytes); found != entries_.end()) {
    Entry& entry = entries_.at(found->first);
    ++entry.refcount;
    ++stats_.registrations;
    ++stats_.hits;
    return Registration{entry.allocation, p - entry.allocation.base, bytes, entry.record};
  }
  auto allocation = resolver_->allocationOf(ptr);
  if (!allocation.isOk()) return fail(allocation.status().withContext(rankPrefix(rank_) + "registering buffer"));
  const AddressRange range = *allocation;
  if (!range.contains(p, 1)) {
    return fail(internalError(rankPrefix(rank_) + "allocation resolver returned " +
                              describeRange(range.base, range.bytes) + " for pointer " + std::to_string(p)));
  }
  if (!range.contains(p, bytes)) {
    return fail(invalidArgumentError(rankPrefix(rank_) + "buffer " + describeRange(p, bytes) +
                                     " extends past the end of its allocation " +
                                     describeRange(range.base, range.bytes)));
  }
  // Any registered allocation overlapping this one is stale (its memory was freed without release).
  if (range.bytes > UINTPTR_MAX - range.base) {
    return fail(internalError(rankPrefix(rank_) + "allocation resolver returned a range past the address space"));
  }
  auto next = entries_.lower_bound(range.base);
  const bool overlaps_next = next != entries_.end() && next->first < range.base + range.bytes;
  const bool overlaps_prev = next != entries_.begin() && [&] {
    const auto& prev = std::prev(next)->second.allocation;
    return prev.base + prev.bytes > range.base;
  }();
  if (overlaps_next || overlaps_prev) {
    const AddressRange& other = overlaps_next ? next->second.allocation : std::prev(next)->second.allocation;
    return fail(invalidArgumentError(rankPrefix(rank_) + "allocation " + describeRange(range.base, range.bytes) +
                                     " overlaps the registered allocation " + describeRange(other.base, other.bytes) +
                                     " (freed without release?); release that registration first"));
  }
  if (entries_.size() >= max_entries_) {
    return fail(outOfMemoryError(rankPrefix(rank_) + "registration cache is full (" + std::to_string(max_entries_) +
                                 " allocations registered, max_entries); release registrations before "
                                 "registering buffer " +
                                 describeRange(p, bytes)));
  }
  auto record = exporter_->exportAllocation(range);
  if (!record.isOk()) return fail(record.status().withContext(rankPrefix(rank_) + "exporting allocation"));
  if (record->empty() || record->size() > kMaxPeerRecordBytes) {
    exporter_->releaseExport(range, *record);
    return fail(internalError(rankPrefix(rank_) + "exported handle record of " + std::to_string(record->size()) +
                              " bytes is outside 1.." + std::to_string(kMaxPeerRecordBytes)));
  }
  Entry entry{range, std::move(*record), 1};
  Registration result{range, p - range.base, bytes, entry.record};
  entries_.emplace(range.base, std::move(entry));
  ++stats_.registrations;
  ++stats_.exports;
  ++stats_.entries;
  stats_.registered_bytes += range.bytes;
  return result;
}

std::optional<RegisteredRange> RegistrationCache::lookup(const void* ptr, std::size_t bytes) const {
  const auto p = reinterpret_cast<std::uintptr_t>(ptr);
  if (ptr == nullptr || bytes > UINTPTR_MAX - p) return std::nullopt;
  const auto it = find(p, bytes);
  if (it == entries_.end()) return std::nullopt;
  return RegisteredRange{it->second.allocation, p - it->second.allocation.base, bytes, it->second.refcount};
}

Status RegistrationCache::release(const void* ptr) {
  const auto p = reinterpret_cast<std::uintptr_t>(ptr);
  const auto found = find(p, 1);
  if (ptr == nullptr || found == entries_.end()) {
    return invalidArgumentError(rankPrefix(rank_) + "pointer " + std::to_string(p) +
                                " is not inside any registered allocation");
  }
  auto it = entries_.find(found->first);
  if (--it->second.refcount == 0) erase(it);
  return Status::ok();
}

void RegistrationCache::erase(std::map<std::uintptr_t, Entry>::iterator it) {
  exporter_->releaseExport(it->second.allocation, it->second.record);
  ++stats_.releases;
  --stats_.entries;
  stats_.registered_bytes -= it->second.allocation.bytes;
  entries_.erase(it);
}

void RegistrationCache::releaseAll() {
  while (!entries_.empty()) erase(entries_.begin());  // bounded by the entries, one removed per pass
}

RegistrationStats RegistrationCache::stats() const { return stats_; }

}  // namespace peerreduce
