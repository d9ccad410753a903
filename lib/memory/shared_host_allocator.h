// SharedHostAllocator: pinned-pool memory that other processes can map (internal).
//
// Every allocation is a SharedHostSegment of its own (memory/shared_host_segment.h), so a pinned
// block can hold a rank's host-staged region and its peers in other processes map it by the name
// sharedName() gives. Locking is the caller's registration (`Registration`): in GPU builds the
// runtime's host registration, mapped and portable (gpu/gpu_host_allocator.cc), so every device
// reaches the pages through a device pointer; in tests anything.
//
// A block whose sharing ended (endSharing removed its name) cannot be shared again, so it is not
// reusable: the pool frees it when it comes back instead of handing it to a later region.
//
// Host-only: tested without a GPU (tests/lib/memory/shared_host_allocator_test.cc).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "memory/host_allocator.h"
#include "memory/shared_host_segment.h"

namespace peerreduce {

class SharedHostAllocator : public HostAllocator {
 public:
  struct Registration {
    std::string name;                                // for the allocator's name(), e.g. "hipHostRegister"
    std::function<Status(void*, std::size_t)> lock;  // pins and maps the pages for the device(s)
    std::function<void(void*, std::size_t)> unlock;  // undoes lock before the pages are unmapped
  };

  explicit SharedHostAllocator(Registration registration) : registration_(std::move(registration)) {}

  std::string name() const override { return "POSIX shared memory registered with " + registration_.name; }
  // Alignment is the page's (segments are page-aligned mappings); a stricter one is kInvalidArgument.
  StatusOr<void*> allocate(std::size_t bytes, std::size_t alignment) override;
  Status lock(void* ptr, std::size_t bytes) override;
  void unlock(void* ptr, std::size_t bytes) override;
  void deallocate(void* ptr, std::size_t bytes) override;
  std::string sharedName(const void* ptr) const override;
  Status endSharing(const void* ptr) override;
  bool reusable(const void* ptr) const override;

  // Segments held now (tests check that every path gives them back).
  std::size_t segments() const;

 private:
  const Registration registration_;
  mutable std::mutex mu_;
  std::map<const void*, SharedHostSegment> segments_;  // by mapping address
};

}  // namespace peerreduce
