// Workspace beside a user's buffer in GPU builds: see workspace_memory.h.
#include <string>

#include "gpu/gpu_check.h"
#include "gpu/workspace_memory.h"
#include "portability.h"

namespace peerreduce {

int userBufferDevice(const void* user_buffer) { return deviceOfMemory(user_buffer); }

StatusOr<std::shared_ptr<std::byte>> allocateLikeUserBuffer(const void* user_buffer, std::size_t bytes) {
  const int device = deviceOfMemory(user_buffer);
  if (device < 0) return std::shared_ptr<std::byte>(new std::byte[bytes], std::default_delete<std::byte[]>());
  int previous = 0;
  PR_GPU_CHECK(-1, hipGetDevice(&previous));
  PR_GPU_CHECK(-1, hipSetDevice(device));
  void* memory = nullptr;
  const hipError_t error = hipMalloc(&memory, bytes);
  (void)hipSetDevice(previous);  // the caller's thread keeps its device
  if (error != hipSuccess) {
    (void)hipGetLastError();
    return outOfMemoryError("could not allocate " + std::to_string(bytes) + " bytes of workspace on device " +
                            std::to_string(device) + ": " +
                            gpu::gpuError(error, "hipMalloc", __FILE__, __LINE__, -1).message());
  }
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(memory), [device](std::byte* p) {
    int current = 0;
    if (hipGetDevice(&current) != hipSuccess) current = device;
    (void)hipSetDevice(device);
    (void)hipFree(p);
    (void)hipSetDevice(current);
  });
}

}  // namespace peerreduce
