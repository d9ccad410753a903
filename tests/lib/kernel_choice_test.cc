// Which GPU kernel runs an operation, and the low-latency lines' memory (lib/gpu/kernel_choice.h),
// checked without a GPU.
#include <gtest/gtest.h>

#include "gpu/kernel_choice.h"
#include "peerreduce/types.h"

namespace peerreduce::gpu {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;

TEST(KernelChoice, LineCapacityHoldsWholeVectorsInBothHalvesAndTheAreaStaysWithinTheBudget) {
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
  EXPECT_EQ(lineTwoShotPayloadBytes(4), 1 * kMiB);
  EXPECT_EQ(linePayloadBytes(2), 1 * kMiB);
}

TEST(KernelChoice, OneShotProgramsRunAsLinesWithinBothLimitsElseFused) {
  const KernelPolicy policy;
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4096, 4, policy), KernelChoice::kOneShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 1, 4, policy), KernelChoice::kOneShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, policy.max_bytes, 4, policy), KernelChoice::kOneShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, policy.max_bytes + 1, 4, policy), KernelChoice::kOneShotPull);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4096, 1, policy), KernelChoice::kOneShotPull)
      << "a single rank has no peer to push to";
  // The payload limit of a large world binds before the setting does.
  KernelPolicy generous;
  generous.max_bytes = std::uint64_t{1} << 30;
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, linePayloadBytes(64), 64, generous), KernelChoice::kOneShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, linePayloadBytes(64) + 16, 64, generous), KernelChoice::kOneShotPull);
  KernelPolicy off;
  off.max_bytes = 0;
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 16, 4, off), KernelChoice::kOneShotPull);
}

TEST(KernelChoice, TwoShotProgramsRunAsLinesPulledOrPushedBySize) {
  KernelPolicy policy;
  EXPECT_EQ(policy.max_two_shot_bytes, 0u) << "two-shot lines are off by default";
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 512 * kKiB, 4, policy), KernelChoice::kTwoShotPull);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, policy.push_min_bytes - 1, 4, policy), KernelChoice::kTwoShotPull);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, policy.push_min_bytes, 4, policy), KernelChoice::kTwoShotPush);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 256 * kMiB, 4, policy), KernelChoice::kTwoShotPush);
  policy.max_two_shot_bytes = 1 * kMiB;
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 512 * kKiB, 4, policy), KernelChoice::kTwoShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 1 * kMiB, 4, policy), KernelChoice::kTwoShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 1 * kMiB + 16, 4, policy), KernelChoice::kTwoShotPull);
  // 4 ranks: 49 bytes are 4 vectors (one per rank), 48 bytes only 3.
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 49, 4, policy), KernelChoice::kTwoShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 48, 4, policy), KernelChoice::kTwoShotPull);
  policy.max_two_shot_bytes = std::uint64_t{1} << 30;
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, lineTwoShotPayloadBytes(8), 8, policy), KernelChoice::kTwoShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, lineTwoShotPayloadBytes(8) + 1, 8, policy), KernelChoice::kTwoShotPull);
  policy.push_min_bytes = 0;
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 256 * kMiB, 4, policy), KernelChoice::kTwoShotPull) << "pushing off";
}

TEST(KernelChoice, OtherProgramsAndTheFusedSwitchGoToTheInterpreter) {
  KernelPolicy policy;
  EXPECT_EQ(chooseKernel(FusedKind::kNone, 4096, 4, policy), KernelChoice::kInterpreter);
  EXPECT_EQ(chooseKernel(FusedKind::kNone, 64 * kMiB, 4, policy), KernelChoice::kInterpreter);
  policy.fused = false;
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4096, 4, policy), KernelChoice::kInterpreter);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 64 * kMiB, 4, policy), KernelChoice::kInterpreter);
}

}  // namespace
}  // namespace peerreduce::gpu
