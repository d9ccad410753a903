#include "memory/shared_host_allocator.h"

#include <unistd.h>

namespace peerreduce {

StatusOr<void*> SharedHostAllocator::allocate(std::size_t bytes, std::size_t alignment) {
  const long page = ::sysconf(_SC_PAGESIZE);
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 ||
      (page > 0 && alignment > static_cast<std::size_t>(page))) {
    return invalidArgumentError("shared host allocation of " + std::to_string(bytes) + " bytes: alignment " +
                                std::to_string(alignment) + " is not a power of two up to the page size");
  }
  PR_ASSIGN_OR_RETURN(SharedHostSegment segment, SharedHostSegment::create(bytes));
  void* data = segment.data();
  std::lock_guard<std::mutex> lock(mu_);
  segments_.emplace(data, std::move(segment));
  return data;
}

Status SharedHostAllocator::lock(void* ptr, std::size_t bytes) { return registration_.lock(ptr, bytes); }

void SharedHostAllocator::unlock(void* ptr, std::size_t bytes) { registration_.unlock(ptr, bytes); }

void SharedHostAllocator::deallocate(void* ptr, std::size_t /*bytes*/) {
  std::lock_guard<std::mutex> lock(mu_);
  segments_.erase(ptr);  // unmaps, and removes a name still linked
}

std::string SharedHostAllocator::sharedName(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = segments_.find(ptr);
  return it != segments_.end() && it->second.linked() ? it->second.name() : std::string();
}

Status SharedHostAllocator::endSharing(const void* ptr) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = segments_.find(ptr);
  if (it == segments_.end()) return internalError("no shared host segment starts at this block");
  return it->second.unlink();
}

bool SharedHostAllocator::reusable(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = segments_.find(ptr);
  return it != segments_.end() && it->second.linked();
}

std::size_t SharedHostAllocator::segments() const {
  std::lock_guard<std::mutex> lock(mu_);
  return segments_.size();
}

}  // namespace peerreduce
