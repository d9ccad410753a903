// The GPU transport in a build without a GPU platform (PEERREDUCE_GPU=none): it says so.
#include "gpu/workspace_memory.h"
#include "memory/host_allocator.h"
#include "peerreduce/gpu.h"

namespace peerreduce {

StatusOr<std::shared_ptr<Transport>> createGpuTransport(int rank, int /*world_size*/,
                                                        const GpuTransportOptions& /*options*/) {
  return unsupportedError("rank " + std::to_string(rank) +
                          ": this build of peerreduce has no GPU backend; configure with -DPEERREDUCE_GPU=cuda or hip");
}

StatusOr<int> resolveGpuDevice(int /*requested*/, int /*local_rank*/, int rank) {
  return unsupportedError("rank " + std::to_string(rank) +
                          ": this build of peerreduce has no GPU backend; configure with -DPEERREDUCE_GPU=cuda or hip");
}

const char* gpuPlatformName() { return "none"; }

std::shared_ptr<HostAllocator> platformHostAllocator() { return systemHostAllocator(); }

// Without a GPU every user buffer is host memory.
int userBufferDevice(const void* /*user_buffer*/) { return -1; }

StatusOr<std::shared_ptr<std::byte>> allocateLikeUserBuffer(const void* /*user_buffer*/, std::size_t bytes) {
  return std::shared_ptr<std::byte>(new std::byte[bytes], std::default_delete<std::byte[]>());
}

}  // namespace peerreduce
