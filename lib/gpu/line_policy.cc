#include "gpu/line_policy.h"

#include <algorithm>

namespace peerreduce::gpu {
namespace {

constexpr std::uint64_t kParities = 2;
constexpr std::uint64_t kLineBytesPerVector = 32;  // 16 input bytes travel as two 16-byte lines

}  // namespace

std::uint64_t lineCapacityBytes(int world_size) {
  const auto writers = static_cast<std::uint64_t>(std::max(world_size, 1));
  return kLineAreaBudgetBytes / (kParities * writers) / kLineBytesPerVector * kLineBytesPerVector;
}

std::uint64_t lineAreaBytes(int world_size) {
  return kParities * static_cast<std::uint64_t>(std::max(world_size, 1)) * lineCapacityBytes(world_size);
}

std::uint64_t linePayloadBytes(int world_size) { return lineCapacityBytes(world_size) / 2; }

bool useLowLatency(FusedKind kind, std::uint64_t bytes, int world_size, const LinePolicy& policy) {
  return kind == FusedKind::kOneShot && world_size >= 2 && bytes > 0 && bytes <= policy.max_bytes &&
         bytes <= linePayloadBytes(world_size);
}

}  // namespace peerreduce::gpu
