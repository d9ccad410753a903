// The low-latency kernels' memory and choice (lib/gpu/line_policy.h), checked without a GPU.
#include <gtest/gtest.h>

#include "gpu/line_policy.h"
#include "peerreduce/types.h"

namespace peerreduce::gpu {
namespace {

constexpr std::uint64_t kKiB = 1024;

TEST(LinePolicy, CapacityHoldsWholeVectorsInBothHalvesAndTheAreaStaysWithinTheBudget) {
  for (int n = 1; n <= kMaxWorldSize; ++n) {
    const std::uint64_t capacity = lineCapacityBytes(n);
    EXPECT_EQ(capacity % 64, 0u) << n;
    EXPECT_GT(capacity, 0u) << n;
    EXPECT_LE(lineAreaBytes(n), kLineAreaBudgetBytes) << n;
    EXPECT_EQ(lineAreaBytes(n), 2u * static_cast<std::uint64_t>(n) * capacity) << n;
    // One-shot: 16 payload bytes take 32 line bytes, so the payload is half the capacity.
    EXPECT_EQ(linePayloadBytes(n) * 2, capacity) << n;
    // Two-shot: the largest payload's owner ranges (ceil(vectors / n) vectors) fill a half exactly.
    const std::uint64_t vectors = lineTwoShotPayloadBytes(n) / 16;
    const std::uint64_t range = (vectors + n - 1) / static_cast<std::uint64_t>(n);
    EXPECT_EQ(range * 32, capacity / 2) << n;
  }
  EXPECT_EQ(linePayloadBytes(4), 512 * kKiB);
  EXPECT_EQ(lineTwoShotPayloadBytes(4), 1024 * kKiB);
  EXPECT_EQ(linePayloadBytes(2), 1024 * kKiB);
}

TEST(LinePolicy, OneShotProgramsWithinBothLimitsRunAsOneShotLines) {
  const LinePolicy policy;
  EXPECT_EQ(chooseLineKernel(FusedKind::kOneShot, 4096, 4, policy), LineKernel::kOneShot);
  EXPECT_EQ(chooseLineKernel(FusedKind::kOneShot, 1, 4, policy), LineKernel::kOneShot);
  EXPECT_EQ(chooseLineKernel(FusedKind::kOneShot, policy.max_bytes, 4, policy), LineKernel::kOneShot);
  EXPECT_EQ(chooseLineKernel(FusedKind::kOneShot, policy.max_bytes + 1, 4, policy), LineKernel::kNone);
  EXPECT_EQ(chooseLineKernel(FusedKind::kNone, 4096, 4, policy), LineKernel::kNone);
  EXPECT_EQ(chooseLineKernel(FusedKind::kOneShot, 4096, 1, policy), LineKernel::kNone)
      << "a single rank has no peer to push to";
  EXPECT_EQ(chooseLineKernel(FusedKind::kOneShot, 0, 4, policy), LineKernel::kNone);
  // The payload limit of a large world binds before the setting does.
  const LinePolicy generous{.max_bytes = std::uint64_t{1} << 30, .max_two_shot_bytes = std::uint64_t{1} << 30};
  EXPECT_EQ(chooseLineKernel(FusedKind::kOneShot, linePayloadBytes(64), 64, generous), LineKernel::kOneShot);
  EXPECT_EQ(chooseLineKernel(FusedKind::kOneShot, linePayloadBytes(64) + 16, 64, generous), LineKernel::kNone);
  const LinePolicy off{.max_bytes = 0, .max_two_shot_bytes = 0};
  EXPECT_EQ(chooseLineKernel(FusedKind::kOneShot, 16, 4, off), LineKernel::kNone);
  EXPECT_EQ(chooseLineKernel(FusedKind::kTwoShot, 4096, 4, off), LineKernel::kNone);
}

TEST(LinePolicy, TwoShotProgramsNeedAVectorPerRankAndFitTheirLimits) {
  const LinePolicy policy;
  EXPECT_EQ(chooseLineKernel(FusedKind::kTwoShot, 512 * kKiB, 4, policy), LineKernel::kTwoShot);
  EXPECT_EQ(chooseLineKernel(FusedKind::kTwoShot, policy.max_two_shot_bytes, 4, policy), LineKernel::kTwoShot);
  EXPECT_EQ(chooseLineKernel(FusedKind::kTwoShot, policy.max_two_shot_bytes + 16, 4, policy), LineKernel::kNone);
  // 4 ranks: 49 bytes are 4 vectors (one per rank), 48 bytes only 3.
  EXPECT_EQ(chooseLineKernel(FusedKind::kTwoShot, 49, 4, policy), LineKernel::kTwoShot);
  EXPECT_EQ(chooseLineKernel(FusedKind::kTwoShot, 48, 4, policy), LineKernel::kNone);
  const LinePolicy generous{.max_bytes = 0, .max_two_shot_bytes = std::uint64_t{1} << 30};
  EXPECT_EQ(chooseLineKernel(FusedKind::kTwoShot, lineTwoShotPayloadBytes(8), 8, generous), LineKernel::kTwoShot);
  EXPECT_EQ(chooseLineKernel(FusedKind::kTwoShot, lineTwoShotPayloadBytes(8) + 1, 8, generous), LineKernel::kNone);
  EXPECT_EQ(chooseLineKernel(FusedKind::kOneShot, 4096, 4, generous), LineKernel::kNone) << "one-shot lines off";
}

}  // namespace
}  // namespace peerreduce::gpu
