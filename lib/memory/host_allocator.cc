#include "memory/host_allocator.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace peerreduce {

StatusOr<void*> SystemHostAllocator::allocate(std::size_t bytes, std::size_t alignment) {
  if (bytes == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return invalidArgumentError("host allocation of " + std::to_string(bytes) + " bytes aligned to " +
                                std::to_string(alignment));
  }
  // aligned_alloc wants a size that is a multiple of the alignment; round up with an overflow check.
  if (bytes > SIZE_MAX - (alignment - 1)) {
    return outOfMemoryError("host allocation of " + std::to_string(bytes) + " bytes overflows when aligned");
  }
  const std::size_t rounded = (bytes + alignment - 1) & ~(alignment - 1);
  void* p = std::aligned_alloc(alignment, rounded);
  if (p == nullptr) {
    return outOfMemoryError("the system has no " + std::to_string(rounded) + " bytes of host memory to pin");
  }
  return p;
}

Status SystemHostAllocator::lock(void* ptr, std::size_t bytes) {
  if (::mlock(ptr, bytes) != 0) {
    // errno by number: strerror is not thread-safe. EPERM / ENOMEM are the usual ones: no CAP_IPC_LOCK,
    // or over RLIMIT_MEMLOCK.
    const int err = errno;
    return unavailableError("mlock of " + std::to_string(bytes) + " bytes failed with errno " + std::to_string(err) +
                            (err == ENOMEM || err == EPERM ? " (over RLIMIT_MEMLOCK)" : "") +
                            "; raise the locked-memory limit (ulimit -l) to pin host memory");
  }
  return Status::ok();
}

void SystemHostAllocator::unlock(void* ptr, std::size_t bytes) {
  // Failure here changes nothing for us: the memory is freed right after.
  (void)::munlock(ptr, bytes);
}

void SystemHostAllocator::deallocate(void* ptr, std::size_t /*bytes*/) { std::free(ptr); }

std::shared_ptr<HostAllocator> systemHostAllocator() {
  static const std::shared_ptr<HostAllocator> allocator = std::make_shared<SystemHostAllocator>();
  return allocator;
}

}  // namespace peerreduce
