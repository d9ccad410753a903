// The GPU transport in a build without a GPU platform (PEERREDUCE_GPU=none): it says so.
#include "memory/host_allocator.h"
#include "peerreduce/gpu.h"

namespace peerreduce {

StatusOr<std::shared_ptr<Transport>> createGpuTransport(int rank, int /*world_size*/,
                                                        const GpuTransportOptions& /*options*/) {
  return unsupportedError("rank " + std::to_string(rank) +
                          ": this build of peerreduce has no GPU backend; configure with -DPEERREDUCE_GPU=cuda or hip");
}

const char* gpuPlatformName() { return "none"; }

std::shared_ptr<HostAllocator> platformHostAllocator() { return systemHostAllocator(); }

}  // namespace peerreduce
