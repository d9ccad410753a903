// The benchmarks' copy kernel: 16-byte vectors (the kernels' access width), kCopyUnroll loads in flight
// per thread before their stores, grid-strided. Shared by peerreduce-p2p-probe (peer memory) and
// peerreduce-host-copy-bench (mapped host memory).
#pragma once

#include <cstddef>

#include "portability.h"

namespace peerreduce::bench {

inline constexpr int kCopyUnroll = 4;

__global__ void copyKernel(gpu::Bytes16* dst, const gpu::Bytes16* src, std::size_t vectors) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x * kCopyUnroll;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * kCopyUnroll + threadIdx.x; base < vectors;
       base += stride) {
    gpu::Bytes16 data[kCopyUnroll];
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) {
      const std::size_t v = base + static_cast<std::size_t>(u) * blockDim.x;
      if (v < vectors) data[u] = gpu::loadStreaming16(src + v);
    }
#pragma unroll
    for (int u = 0; u < kCopyUnroll; ++u) {
      const std::size_t v = base + static_cast<std::size_t>(u) * blockDim.x;
      if (v < vectors) dst[v] = data[u];
    }
  }
}

}  // namespace peerreduce::bench
