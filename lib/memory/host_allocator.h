// HostAllocator: where pinned host memory comes from (internal).
//
// PinnedHostPool asks an allocator for memory and then asks it to lock (page-lock) the memory. Two
// implementations share this interface:
// - SystemHostAllocator (here, CPU-only machines and the simulator): page-aligned host memory from
//   std::aligned_alloc, locked with mlock() where the system allows (RLIMIT_MEMLOCK, CAP_IPC_LOCK);
//   when it does not, lock() fails and the pool uses the memory unlocked, counting it in its stats.
// - GpuHostAllocator (gpu/gpu_host_allocator.cc, GPU builds): allocate = hipHostMalloc, portable and
//   mapped (pinned for every device at once, so lock() succeeds without work).
// - SharedHostAllocator (memory/shared_host_allocator.h): POSIX shared-memory segments that other
//   processes map by name, locked by a registration the caller supplies; the GPU build's platform
//   allocator, so pinned blocks can back host-staged links between processes.
// Tests inject their own (failure injection, call logs).
//
// Contract: allocate() returns memory aligned to `alignment` (a power of two) of at least `bytes`, or
// an error (kOutOfMemory when the system has none); deallocate() takes back exactly what allocate gave
// (unlock() first if lock() succeeded). lock() failing is not fatal: it reports why.
//
// Thread safety: implementations must be safe to call from several threads (the pool calls them under
// its own mutex, but several pools may share one allocator).
//
// Example:
//   auto allocator = systemHostAllocator();
//   auto p = allocator->allocate(1 << 20, kPinnedPageBytes);
//   if (p.isOk() && !allocator->lock(*p, 1 << 20).isOk()) { /* used unlocked */ }
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "peerreduce/status.h"

namespace peerreduce {

class HostAllocator {
 public:
  virtual ~HostAllocator() = default;
  virtual std::string name() const = 0;
  virtual StatusOr<void*> allocate(std::size_t bytes, std::size_t alignment) = 0;
  virtual Status lock(void* ptr, std::size_t bytes) = 0;
  virtual void unlock(void* ptr, std::size_t bytes) = 0;
  virtual void deallocate(void* ptr, std::size_t bytes) = 0;
  // The name another process of this machine maps the allocation at `ptr` by (a shared-memory
  // segment), or empty where allocations cannot be shared.
  virtual std::string sharedName(const void* /*ptr*/) const { return {}; }
  // Removes that name once every process that needs the allocation mapped it (the mappings stay).
  virtual Status endSharing(const void* /*ptr*/) { return Status::ok(); }
  // Whether the pool may hand the allocation out again once it comes back (false for a shared block
  // whose name is gone: a later region in it could not be shared).
  virtual bool reusable(const void* /*ptr*/) const { return true; }
};

// Host memory from std::aligned_alloc, locked with mlock().
class SystemHostAllocator : public HostAllocator {
 public:
  std::string name() const override { return "system (aligned_alloc + mlock)"; }
  StatusOr<void*> allocate(std::size_t bytes, std::size_t alignment) override;
  Status lock(void* ptr, std::size_t bytes) override;
  void unlock(void* ptr, std::size_t bytes) override;
  void deallocate(void* ptr, std::size_t bytes) override;
};

// A process-wide SystemHostAllocator.
std::shared_ptr<HostAllocator> systemHostAllocator();

// The allocator of this build's platform: the GPU runtime's pinned memory in GPU builds
// (gpu/gpu_host_allocator.cc), the system allocator otherwise (gpu/gpu_none.cc).
std::shared_ptr<HostAllocator> platformHostAllocator();

}  // namespace peerreduce
