// PinnedHostPool: page-locked host memory for host-staged paths, bounded and reused (internal).
//
// Policy (docs/MEMORY.md has the reasons):
// - Size classes: a request is rounded up to a power of two, at least `min_block_bytes` (a page). A
//   block is reused for any later request of the same class, so steady traffic of similar sizes pins
//   nothing new, at the price of at most 2x internal waste; the classes are few (one per power of two).
// - Limit: bytes pinned (blocks handed out + idle blocks kept for reuse, counted at class size) never
//   exceed `limit_bytes` after an acquire returns.
// - Reuse takes the most recently released idle block of the class (its pages are the warmest);
//   eviction returns the least recently released idle blocks to the system, of any class, until the
//   new block fits under the limit. When even evicting every idle block would not make room, acquire
//   fails with kOutOfMemory naming PEERREDUCE_PINNED_LIMIT_BYTES and evicts nothing.
// - A block whose allocator says it is not reusable any more (a shared block whose name was removed:
//   HostAllocator::reusable) is freed when it comes back, counted in blocks_retired.
// - New memory is taken from the HostAllocator before anything is evicted, so a failed acquire
//   (limit or system) changes nothing but the failure counter. Then the block is locked; where the
//   system refuses (RLIMIT_MEMLOCK), it is used unlocked and counted in lock_failures.
//
// Ownership: PinnedBlock is a move-only RAII handle; its destructor returns the block to the pool as
// idle. Handles keep the pool's state alive: destroying the PinnedHostPool frees its idle blocks at
// once, and each block still handed out is freed when its handle dies.
//
// Thread safety: acquire, stats, trim and handle destruction may be called from any threads
// concurrently (one mutex per pool; system calls to allocate, lock and free happen under it, and none
// of them waits on anything but the kernel). One PinnedBlock must not be used by two threads at once.
//
// Example:
//   auto pool = PinnedHostPool::create({.limit_bytes = 256 << 20}).value();
//   auto staging = pool.acquire(4 << 20);   // kOutOfMemory names PEERREDUCE_PINNED_LIMIT_BYTES
//   if (!staging.isOk()) return staging.status();
//   std::memcpy(staging->data(), src, 4 << 20);
//   // staging returns to the pool (idle, reusable) when it goes out of scope
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "memory/host_allocator.h"
#include "peerreduce/memory.h"
#include "peerreduce/status.h"

namespace peerreduce {

struct PinnedHostPoolOptions {
  std::size_t limit_bytes = kDefaultPinnedLimitBytes;  // PEERREDUCE_PINNED_LIMIT_BYTES
  std::size_t min_block_bytes = kPinnedPageBytes;      // smallest size class; a power of two
  std::size_t alignment_bytes = kPinnedPageBytes;      // a power of two, at most min_block_bytes
  int rank = -1;                                       // for messages only; < 0 = no rank
};

// What an acquisition is for: staging (a host-staged link's traffic, counted in bytes_staged as it is
// acquired: the simulator takes a block per transfer) or a resident region (a GPU rank's host-placed
// region, held for the communicator's life; its traffic is counted by recordStaged).
enum class PinnedUse { kStaging, kResident };

namespace detail {
class PinnedState;
}  // namespace detail

class PinnedBlock {
 public:
  PinnedBlock() = default;
  PinnedBlock(PinnedBlock&& other) noexcept;
  PinnedBlock& operator=(PinnedBlock&& other) noexcept;
  PinnedBlock(const PinnedBlock&) = delete;
  PinnedBlock& operator=(const PinnedBlock&) = delete;
  ~PinnedBlock();

  bool valid() const { return state_ != nullptr; }
  explicit operator bool() const { return valid(); }
  void* data() const { return data_; }
  std::size_t size() const { return size_; }          // as asked
  std::size_t capacity() const { return capacity_; }  // the size class: usable, >= size()
  bool locked() const { return locked_; }
  // Number of the system allocation behind this block (1, 2, ... per pool): tests and logs.
  std::uint64_t id() const { return id_; }
  // Returns the block to the pool now.
  void reset();
  // The name another process maps this block by (HostAllocator::sharedName), empty where the pool's
  // allocator cannot share it or its sharing ended.
  std::string sharedName() const;
  // Removes that name once every peer mapped the block; the block is then not reused after release.
  Status endSharing();

 private:
  friend class PinnedHostPool;
  std::shared_ptr<detail::PinnedState> state_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  bool locked_ = false;
  std::uint64_t id_ = 0;
};

class PinnedHostPool {
 public:
  // kInvalidArgument naming the setting when `options` are out of range. A null allocator means
  // systemHostAllocator().
  static StatusOr<PinnedHostPool> create(const PinnedHostPoolOptions& options,
                                         std::shared_ptr<HostAllocator> allocator = nullptr);
  PinnedHostPool(PinnedHostPool&&) noexcept = default;
  PinnedHostPool& operator=(PinnedHostPool&&) noexcept;
  PinnedHostPool(const PinnedHostPool&) = delete;
  PinnedHostPool& operator=(const PinnedHostPool&) = delete;
  ~PinnedHostPool();

  // A block of at least `bytes`. kInvalidArgument for 0; kOutOfMemory when the size class exceeds the
  // limit, when blocks in use leave no room even after evicting every idle block, or when the system
  // has no memory.
  StatusOr<PinnedBlock> acquire(std::size_t bytes, PinnedUse use = PinnedUse::kStaging);
  // Returns every idle block to the system (counted as evictions); returns the bytes freed.
  std::size_t trim();
  PinnedStats stats() const;
  const PinnedHostPoolOptions& options() const;
  // Counts one operation that moved `bytes` through pinned host memory (bytes_staged,
  // staged_operations): lock-free, so every kernel launch may call it.
  void recordStaged(std::uint64_t bytes) const;

  // The size class of `bytes`: the next power of two, at least `min_block_bytes`; 0 if none fits in
  // size_t.
  static std::size_t sizeClassOf(std::size_t bytes, std::size_t min_block_bytes);

 private:
  explicit PinnedHostPool(std::shared_ptr<detail::PinnedState> state) : state_(std::move(state)) {}
  void close();
  std::shared_ptr<detail::PinnedState> state_;
};

}  // namespace peerreduce
