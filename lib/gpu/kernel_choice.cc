#include "gpu/kernel_choice.h"

#include <algorithm>

namespace peerreduce::gpu {
namespace {

constexpr std::uint64_t kParities = 2;
constexpr std::uint64_t kVectorBytes = 16;
constexpr std::uint64_t kLineBytesPerVector = 32;  // 16 input bytes travel as two 16-byte lines
constexpr std::uint64_t kCapacityGranule = 2 * kLineBytesPerVector;

}  // namespace

std::uint64_t lineCapacityBytes(int world_size) {
  const auto writers = static_cast<std::uint64_t>(std::max(world_size, 1));
  return kLineAreaBudgetBytes / (kParities * writers) / kCapacityGranule * kCapacityGranule;
}

std::uint64_t lineAreaBytes(int world_size) {
  return kParities * static_cast<std::uint64_t>(std::max(world_size, 1)) * lineCapacityBytes(world_size);
}

std::uint64_t linePayloadBytes(int world_size) { return lineCapacityBytes(world_size) / 2; }

std::uint64_t lineTwoShotPayloadBytes(int world_size) {
  // Each owner's range, ceil(vectors / n) vectors, must fit half the capacity as lines.
  const std::uint64_t range_vectors = lineCapacityBytes(world_size) / 2 / kLineBytesPerVector;
  return static_cast<std::uint64_t>(std::max(world_size, 1)) * range_vectors * kVectorBytes;
}

KernelChoice chooseKernel(FusedKind kind, std::uint64_t bytes, int world_size, const KernelPolicy& policy) {
  if (!policy.fused || kind == FusedKind::kNone) return KernelChoice::kInterpreter;
  const bool lines = world_size >= 2 && bytes > 0;
  if (kind == FusedKind::kOneShot) {
    return lines && bytes <= policy.max_bytes && bytes <= linePayloadBytes(world_size) ? KernelChoice::kOneShotLines
                                                                                        : KernelChoice::kOneShotPull;
  }
  const std::uint64_t vectors = (bytes + kVectorBytes - 1) / kVectorBytes;
  if (lines && bytes <= policy.max_two_shot_bytes && bytes <= lineTwoShotPayloadBytes(world_size) &&
      vectors >= static_cast<std::uint64_t>(world_size)) {
    return KernelChoice::kTwoShotLines;
  }
  if (policy.push_min_bytes != 0 && bytes >= policy.push_min_bytes) return KernelChoice::kTwoShotPush;
  return KernelChoice::kTwoShotPull;
}

}  // namespace peerreduce::gpu
