// Pinned host memory on GPU machines: hipHostMalloc gives memory that is page-locked and mapped for
// every device at once (portable + mapped), so lock() has nothing left to do. PinnedHostPool uses this
// through platformHostAllocator() in GPU builds; CPU-only builds use the system allocator
// (gpu_none.cc), behind the same interface.
#include <string>

#include "gpu/gpu_check.h"
#include "memory/host_allocator.h"
#include "portability.h"

namespace peerreduce {
namespace {

class GpuHostAllocator : public HostAllocator {
 public:
  std::string name() const override { return "GPU runtime (hipHostMalloc, portable + mapped)"; }

  StatusOr<void*> allocate(std::size_t bytes, std::size_t alignment) override {
    // The runtime returns page-aligned memory; a stricter alignment cannot be honoured.
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kRuntimeAlignment) {
      return invalidArgumentError("pinned host allocation of " + std::to_string(bytes) + " bytes: alignment " +
                                  std::to_string(alignment) + " is not a power of two up to " +
                                  std::to_string(kRuntimeAlignment));
    }
    void* ptr = nullptr;
    const hipError_t error = hipHostMalloc(&ptr, bytes == 0 ? 1 : bytes, hipHostMallocPortable | hipHostMallocMapped);
    if (error != hipSuccess || ptr == nullptr) {
      const Status why = gpu::gpuError(error, "hipHostMalloc", __FILE__, __LINE__, -1);
      return outOfMemoryError("could not pin " + std::to_string(bytes) + " bytes of host memory: " + why.message() +
                              "; lower PEERREDUCE_PINNED_LIMIT_BYTES");
    }
    return ptr;
  }
  Status lock(void* /*ptr*/, std::size_t /*bytes*/) override { return Status::ok(); }  // pinned at allocation
  void unlock(void* /*ptr*/, std::size_t /*bytes*/) override {}
  void deallocate(void* ptr, std::size_t /*bytes*/) override { (void)hipHostFree(ptr); }

 private:
  static constexpr std::size_t kRuntimeAlignment = 4096;
};

}  // namespace

std::shared_ptr<HostAllocator> platformHostAllocator() {
  static const std::shared_ptr<HostAllocator> allocator = std::make_shared<GpuHostAllocator>();
  return allocator;
}

}  // namespace peerreduce
