// The low-latency kernel's memory and choice (lib/gpu/line_policy.h), checked without a GPU.
#include <gtest/gtest.h>

#include "gpu/line_policy.h"
#include "peerreduce/types.h"

namespace peerreduce::gpu {
namespace {

TEST(LinePolicy, CapacityHoldsTwoLinesPerVectorAndTheAreaStaysWithinTheBudget) {
  for (int n = 1; n <= kMaxWorldSize; ++n) {
    const std::uint64_t capacity = lineCapacityBytes(n);
    EXPECT_EQ(capacity % 32, 0u) << n;
    EXPECT_GT(capacity, 0u) << n;
    EXPECT_LE(lineAreaBytes(n), kLineAreaBudgetBytes) << n;
    EXPECT_EQ(lineAreaBytes(n), 2u * static_cast<std::uint64_t>(n) * capacity) << n;
    // 16 payload bytes take 32 line bytes: the payload limit is exactly half the capacity.
    EXPECT_EQ(linePayloadBytes(n) * 2, capacity) << n;
  }
  EXPECT_EQ(linePayloadBytes(4), std::uint64_t{256} << 10);
  EXPECT_EQ(linePayloadBytes(2), std::uint64_t{512} << 10);
}

TEST(LinePolicy, OnlyOneShotProgramsWithinBothLimitsRunAsLines) {
  const LinePolicy policy;
  EXPECT_TRUE(useLowLatency(FusedKind::kOneShot, 4096, 4, policy));
  EXPECT_TRUE(useLowLatency(FusedKind::kOneShot, policy.max_bytes, 4, policy));
  EXPECT_FALSE(useLowLatency(FusedKind::kOneShot, policy.max_bytes + 1, 4, policy));
  EXPECT_FALSE(useLowLatency(FusedKind::kTwoShot, 4096, 4, policy));
  EXPECT_FALSE(useLowLatency(FusedKind::kNone, 4096, 4, policy));
  EXPECT_FALSE(useLowLatency(FusedKind::kOneShot, 4096, 1, policy)) << "a single rank has no peer to push to";
  EXPECT_FALSE(useLowLatency(FusedKind::kOneShot, 0, 4, policy));
  // The payload limit of a large world binds before the setting does.
  const LinePolicy generous{.max_bytes = std::uint64_t{1} << 30};
  EXPECT_TRUE(useLowLatency(FusedKind::kOneShot, linePayloadBytes(64), 64, generous));
  EXPECT_FALSE(useLowLatency(FusedKind::kOneShot, linePayloadBytes(64) + 16, 64, generous));
  const LinePolicy off{.max_bytes = 0};
  EXPECT_FALSE(useLowLatency(FusedKind::kOneShot, 16, 4, off));
}

}  // namespace
}  // namespace peerreduce::gpu
