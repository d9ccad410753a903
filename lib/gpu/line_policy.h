// When the GPU transport runs the low-latency one-shot (kernels/line_kernels.cu) and how much memory
// its receive lines take. Host-only, so it is unit-tested without a GPU (tests/lib/line_policy_test.cc).
//
// Every rank must choose the same kernel for the same operation (the kernels follow different
// protocols), so the choice depends only on what every rank shares: the plan's shape, the operation's
// size, the world size and settings every rank must give alike; never on pointers or the device.
#pragma once

#include <cstdint>

#include "gpu/fused_shape.h"

namespace peerreduce::gpu {

// Receive lines per stream slot and rank: [2 parities][world writers][capacity]; the capacity is the
// budget split evenly, so larger worlds carry smaller operations as lines.
inline constexpr std::uint64_t kLineAreaBudgetBytes = std::uint64_t{4} << 20;
// Operations up to this size use lines by default (the benchmark's measured crossover with the
// fused one-shot on 4 x H200: docs/PERF.md); PEERREDUCE_GPU_LL_MAX_BYTES overrides it.
inline constexpr std::uint64_t kDefaultLowLatencyMaxBytes = std::uint64_t{256} << 10;

struct LinePolicy {
  std::uint64_t max_bytes = kDefaultLowLatencyMaxBytes;  // 0 turns the low-latency kernel off
};

// Line bytes reserved per writer and parity: a multiple of 32 (one 16-byte input vector = 2 lines).
std::uint64_t lineCapacityBytes(int world_size);
// Bytes of one stream slot's receive lines on one rank.
std::uint64_t lineAreaBytes(int world_size);
// Largest operation (input bytes) whose lines fit the capacity.
std::uint64_t linePayloadBytes(int world_size);
// Whether an operation of `bytes` whose program has shape `kind` runs as low-latency lines.
bool useLowLatency(FusedKind kind, std::uint64_t bytes, int world_size, const LinePolicy& policy);

}  // namespace peerreduce::gpu
