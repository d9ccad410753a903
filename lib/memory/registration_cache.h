// RegistrationCache: user buffers exported to peers, cached by allocation base (internal).
//
// GPU IPC shares whole allocations, not arbitrary pointers: a peer opens the handle of the allocation
// that contains a buffer and adds the buffer's offset inside it. So registering [ptr, ptr + bytes)
// resolves the allocation containing it (AllocationResolver; cuMemGetAddressRange /
// hipMemGetAddressRange on GPUs, later), exports that allocation once (HandleExporter: the transport
// produces an opaque record of at most kMaxPeerRecordBytes), and hands back base + offset + record:
// what peers receive. Registering any range of an allocation already registered reuses its entry
// (a refcount; no new export). release() drops one reference; the export is released when the last
// one goes, and every entry goes with the cache (releaseAll in the destructor, in base order).
//
// Entries are keyed by base address in an ordered map: lookups are O(log entries), deterministic per
// rank, and registration is never on the allreduce path (lookup may be: it does not allocate).
// An allocation that overlaps a registered one without being it (freed and reallocated without
// release) is refused with kInvalidArgument rather than handing peers a stale handle.
//
// Thread safety: none; one thread at a time, like the Communicator that owns it.
//
// Example:
//   auto cache = RegistrationCache::create(resolver, exporter).value();
//   auto reg = cache->registerBuffer(buf, bytes);       // exports buf's allocation once
//   send(reg->handle_record, reg->offset);              // what peers open
//   ...
//   PR_RETURN_IF_ERROR(cache->release(buf));
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "peerreduce/memory.h"
#include "peerreduce/status.h"

namespace peerreduce {

// 1024 registrations: each costs every peer an IPC mapping opened at registration; past about a
// thousand, opening them dominates and drivers approach their mapping limits.
inline constexpr std::size_t kDefaultMaxRegistrations = 1024;

struct AddressRange {
  std::uintptr_t base = 0;
  std::size_t bytes = 0;
  // True when [p, p + n) lies inside this range (overflow-checked).
  bool contains(std::uintptr_t p, std::size_t n) const {
    return p >= base && p - base <= bytes && n <= bytes - (p - base);
  }
  friend bool operator==(const AddressRange&, const AddressRange&) = default;
};

// Finds the allocation containing a pointer. GPU builds ask the driver; tests supply their own.
class AllocationResolver {
 public:
  virtual ~AllocationResolver() = default;
  virtual StatusOr<AddressRange> allocationOf(const void* ptr) const = 0;
};

// Exports an allocation to peers (an IPC handle) and releases the export. The transport implements it.
class HandleExporter {
 public:
  virtual ~HandleExporter() = default;
  virtual StatusOr<std::vector<std::byte>> exportAllocation(const AddressRange& allocation) = 0;
  virtual void releaseExport(const AddressRange& allocation, const std::vector<std::byte>& record) = 0;
};

// What peers need to reach a registered buffer: the allocation's handle record plus the offset.
struct Registration {
  AddressRange allocation;
  std::size_t offset = 0;  // of the buffer inside the allocation
  std::size_t bytes = 0;
  std::vector<std::byte> handle_record;
};

// A registered range found by lookup (no record copy: lookup must not allocate).
struct RegisteredRange {
  AddressRange allocation;
  std::size_t offset = 0;
  std::size_t bytes = 0;
  std::uint32_t refcount = 0;
};

class RegistrationCache {
 public:
  // kInvalidArgument for a null resolver or exporter, or max_entries 0.
  static StatusOr<std::unique_ptr<RegistrationCache>> create(std::shared_ptr<AllocationResolver> resolver,
                                                             std::shared_ptr<HandleExporter> exporter,
                                                             std::size_t max_entries = kDefaultMaxRegistrations,
                                                             int rank = -1);
  ~RegistrationCache();
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  // Registers [ptr, ptr + bytes). Errors: kInvalidArgument (null, size 0, range overflowing, leaving
  // its allocation, or overlapping a stale registration), kOutOfMemory (max_entries reached), or the
  // resolver's / exporter's error. A failure changes nothing but the failure counter.
  StatusOr<Registration> registerBuffer(const void* ptr, std::size_t bytes);
  // The registered allocation containing [ptr, ptr + bytes), if any.
  std::optional<RegisteredRange> lookup(const void* ptr, std::size_t bytes) const;
  // Drops one reference to the allocation containing `ptr`; kInvalidArgument when none is registered.
  Status release(const void* ptr);
  // Releases every entry, in base order.
  void releaseAll();
  RegistrationStats stats() const;

 private:
  struct Entry {
    AddressRange allocation;
    std::vector<std::byte> record;
    std::uint32_t refcount = 0;
  };
  RegistrationCache(std::shared_ptr<AllocationResolver> resolver, std::shared_ptr<HandleExporter> exporter,
                    std::size_t max_entries, int rank);
  // Entry containing [p, p + n), or end().
  std::map<std::uintptr_t, Entry>::const_iterator find(std::uintptr_t p, std::size_t n) const;
  void erase(std::map<std::uintptr_t, Entry>::iterator it);

  std::shared_ptr<AllocationResolver> resolver_;
  std::shared_ptr<HandleExporter> exporter_;
  std::size_t max_entries_;
  int rank_;
  std::map<std::uintptr_t, Entry> entries_;  // by allocation base
  RegistrationStats stats_;
};

}  // namespace peerreduce
