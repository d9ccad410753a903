// Pinned host memory on GPU machines: every block is a POSIX shared-memory segment
// (memory/shared_host_allocator.h) registered with the runtime, mapped and portable, so every device
// of this process reaches it through a device pointer and a peer process can map the same pages by
// name and register them too (a rank's region behind host-staged links: gpu_transport.cc).
// PinnedHostPool uses this through platformHostAllocator() in GPU builds; CPU-only builds use the
// system allocator (gpu_none.cc), behind the same interface.
#include <string>

#include "gpu/gpu_check.h"
#include "gpu/host_registration.h"
#include "memory/host_allocator.h"
#include "memory/shared_host_allocator.h"
#include "portability.h"

namespace peerreduce {

Status registerHostPages(void* ptr, std::size_t bytes) {
  const hipError_t error = hipHostRegister(ptr, bytes, hipHostRegisterMapped | hipHostRegisterPortable);
  if (error != hipSuccess) {
    (void)hipGetLastError();
    const Status why = gpu::gpuError(error, "hipHostRegister", __FILE__, __LINE__, -1);
    return outOfMemoryError("could not pin " + std::to_string(bytes) + " bytes of host memory: " + why.message() +
                            "; lower PEERREDUCE_PINNED_LIMIT_BYTES or raise the locked-memory limit (ulimit -l)");
  }
  return Status::ok();
}

void unregisterHostPages(void* ptr, std::size_t /*bytes*/) {
  if (hipHostUnregister(ptr) != hipSuccess) (void)hipGetLastError();
}

std::shared_ptr<HostAllocator> platformHostAllocator() {
  static const std::shared_ptr<HostAllocator> allocator = std::make_shared<SharedHostAllocator>(
      SharedHostAllocator::Registration{"hipHostRegister (mapped + portable)", registerHostPages, unregisterHostPages});
  return allocator;
}

}  // namespace peerreduce
