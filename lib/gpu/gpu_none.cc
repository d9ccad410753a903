// The GPU transport in a build without a GPU platform (PEERREDUCE_GPU=none, the "release" preset): it
// says so, and how to build one that has GPUs. The likely reader installed the CPU-only build on a GPU
// machine, so the error names the rebuild, and a warning says the same once on stderr, where it is seen
// even when the caller drops the error.
#include <atomic>
#include <string>

#include "gpu/workspace_memory.h"
#include "memory/host_allocator.h"
#include "peerreduce/gpu.h"
#include "util/log.h"

namespace peerreduce {

namespace {

constexpr const char* kNoGpuBackend =
    "this build of peerreduce has no GPU backend (PEERREDUCE_GPU=none: the simulator only), so it cannot make a "
    "GPU communicator; rebuild it for your GPUs: cmake --preset release-cuda (NVIDIA) or --preset release-hip (AMD), "
    "or configure with -DPEERREDUCE_GPU=cuda or -DPEERREDUCE_GPU=hip";

Status noGpuBackend(int rank) {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true)) PR_WARN(rank, "%s", kNoGpuBackend);
  return unsupportedError("rank " + std::to_string(rank) + ": " + kNoGpuBackend);
}

}  // namespace

StatusOr<std::shared_ptr<Transport>> createGpuTransport(int rank, int /*world_size*/,
                                                        const GpuTransportOptions& /*options*/) {
  return noGpuBackend(rank);
}

StatusOr<int> resolveGpuDevice(int /*requested*/, int /*local_rank*/, int rank) { return noGpuBackend(rank); }

const char* gpuPlatformName() { return "none"; }

std::shared_ptr<HostAllocator> platformHostAllocator() { return systemHostAllocator(); }

// Without a GPU every user buffer is host memory.
int userBufferDevice(const void* /*user_buffer*/) { return -1; }

StatusOr<std::shared_ptr<std::byte>> allocateLikeUserBuffer(const void* /*user_buffer*/, std::size_t bytes) {
  return std::shared_ptr<std::byte>(new std::byte[bytes], std::default_delete<std::byte[]>());
}

}  // namespace peerreduce
