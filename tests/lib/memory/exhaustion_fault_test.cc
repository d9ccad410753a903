// Fault tests: symmetric pool exhaustion during allreduce, on the simulator.
//
// The application holds pool blocks (Communicator::allocateSymmetric) to squeeze the scratch an
// allreduce can get. Transient exhaustion (less than the preferred scratch is free) must fall back to
// more segments through what is free and still give the reference result; persistent exhaustion (not
// even the minimum is free) must be kOutOfMemory on every rank, naming the setting, and the communicator
// must work again once the blocks are returned. Every check is made on every rank, and the pools of
// all ranks must stay identical (the same statistics), since offsets are only meaningful if they are.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "allreduce_case.h"
#include "peerreduce/communicator.h"
#include "test_world.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kExhaustionFaultKiB = 1024;
constexpr std::size_t kExhaustionFaultMiB = 1024 * kExhaustionFaultKiB;
constexpr int kExhaustionFaultRanks = 4;
// 4 MiB pool with 1 MiB of preferred scratch: small enough that a test fills it at once.
constexpr std::size_t kPoolBytes = 4 * kExhaustionFaultMiB;
constexpr std::size_t kExhaustionFaultScratchBytes = 1 * kExhaustionFaultMiB;
// A ring over 4 ranks needs 2 x the message in scratch: 256 Ki floats (1 MiB) is 2 segments with the
// preferred scratch and many more through 128 KiB.
constexpr std::size_t kExhaustionFaultCount = 256 * kExhaustionFaultKiB;

Config poolConfig() {
  Config config;
  config.algorithm = Algorithm::kRing;
  config.scratch_bytes = kExhaustionFaultScratchBytes;
  config.memory.pool_bytes = kPoolBytes;
  return config;
}

std::unique_ptr<TestWorld> makeWorld(const Config& config) {
  auto world = makeSimTestWorld(kExhaustionFaultRanks, sim::SimOptions{}, config);
  EXPECT_TRUE(world.isOk()) << world.status().toString();
  return world.isOk() ? std::move(world).value() : nullptr;
}

// Holds `bytes` of every rank's pool (collective: the same call on every rank, in rank order).
std::vector<SymmetricBlock> holdOnEveryRank(TestWorld& world, std::size_t bytes) {
  std::vector<SymmetricBlock> held;
  for (int r = 0; r < world.size(); ++r) {
    auto block = world.comm(r).allocateSymmetric(bytes);
    EXPECT_TRUE(block.isOk()) << "rank " << r << ": " << block.status().toString();
    if (block.isOk()) held.push_back(*block);
  }
  return held;
}

void releaseScratchOnEveryRank(TestWorld& world) {
  for (int r = 0; r < world.size(); ++r) world.comm(r).releaseScratch();
}

// Every rank's pool has the same statistics as rank 0's; returns rank 0's.
PoolStats expectSymmetricStats(TestWorld& world) {
  const PoolStats first = world.comm(0).memoryStats();
  for (int r = 1; r < world.size(); ++r) {
    EXPECT_EQ(world.comm(r).memoryStats(), first)
        << "rank " << r << ": " << describe(world.comm(r).memoryStats()) << "\nrank 0: " << describe(first);
  }
  return first;
}

// Runs one checked case (reference, guards, bitwise agreement, race checker) and returns the plan
// executions it took over all ranks.
std::uint64_t runCheckedCase(TestWorld& world, std::uint64_t seed) {
  const std::uint64_t before = world.simWorld()->stats().operations;
  AllreduceCase c;
  c.world_size = world.size();
  c.count = kExhaustionFaultCount;
  c.dtype = DataType::kFloat32;
  c.op = ReduceOp::kSum;
  c.algorithm = Algorithm::kRing;
  c.seed = seed;
  const CaseOutcome outcome = runAllreduceCase(world, c);
  EXPECT_TRUE(outcome.ok) << outcome.problem;
  return world.simWorld()->stats().operations - before;
}

TEST(PoolExhaustion, TransientExhaustionFallsBackToMoreSegmentsAndStaysCorrect) {
  auto world = makeWorld(poolConfig());
  ASSERT_NE(world, nullptr);
  const std::uint64_t preferred_ops = runCheckedCase(*world, 1);
  EXPECT_EQ(preferred_ops, std::uint64_t{2} * kExhaustionFaultRanks);  // 2 segments per rank with 1 MiB of scratch

  // Leave only 128 KiB free: the next allreduce gets 128 KiB of scratch instead of 1 MiB.
  releaseScratchOnEveryRank(*world);
  std::vector<SymmetricBlock> held = holdOnEveryRank(*world, kPoolBytes - 128 * kExhaustionFaultKiB);
  ASSERT_EQ(held.size(), static_cast<std::size_t>(kExhaustionFaultRanks));
  const std::uint64_t squeezed_ops = runCheckedCase(*world, 2);
  EXPECT_GT(squeezed_ops, preferred_ops * 4) << "128 KiB of scratch should take at least 8x the segments";
  for (int r = 0; r < kExhaustionFaultRanks; ++r)
    EXPECT_EQ(world->comm(r).scratchBytesHeld(), 128 * kExhaustionFaultKiB) << "rank " << r;
  PoolStats stats = expectSymmetricStats(*world);
  EXPECT_EQ(stats.failed_allocations, 0u) << "a best-effort fallback is not a failure";
  EXPECT_EQ(stats.bytes_in_use, kPoolBytes);

  // Memory returned: the next allreduce takes the preferred scratch again.
  held.clear();
  EXPECT_EQ(runCheckedCase(*world, 3), preferred_ops);
  for (int r = 0; r < kExhaustionFaultRanks; ++r)
    EXPECT_EQ(world->comm(r).scratchBytesHeld(), kExhaustionFaultScratchBytes) << "rank " << r;
  stats = expectSymmetricStats(*world);
  EXPECT_EQ(stats.bytes_in_use, kExhaustionFaultScratchBytes);
  EXPECT_EQ(stats.peak_bytes_in_use, kPoolBytes);
}

TEST(PoolExhaustion, ExhaustionBetweenInFlightOperationsKeepsBothResultsCorrect) {
  // Operations that overlap on the stream: the first runs through the preferred scratch, the second,
  // enqueued after the squeeze and before anything completed, through 256 KiB at another offset.
  auto world = makeWorld(poolConfig());
  ASSERT_NE(world, nullptr);
  constexpr auto kN = static_cast<std::size_t>(kExhaustionFaultRanks);
  std::vector<std::vector<std::int32_t>> send(kN), first(kN), second(kN);
  for (std::size_t r = 0; r < kN; ++r) {
    send[r].resize(kExhaustionFaultCount);
    for (std::size_t i = 0; i < kExhaustionFaultCount; ++i)
      send[r][i] = static_cast<std::int32_t>((i % 1009) * (r + 1));
    first[r].assign(kExhaustionFaultCount, -1);
    second[r].assign(kExhaustionFaultCount, -1);
  }
  for (std::size_t r = 0; r < kN; ++r) {
    Communicator& comm = world->comm(static_cast<int>(r));
    ASSERT_TRUE(comm.allreduce(send[r].data(), first[r].data(), kExhaustionFaultCount, DataType::kInt32, ReduceOp::kSum)
                    .isOk());
  }
  releaseScratchOnEveryRank(*world);
  std::vector<SymmetricBlock> held = holdOnEveryRank(*world, kPoolBytes - 256 * kExhaustionFaultKiB);
  for (std::size_t r = 0; r < kN; ++r) {
    Communicator& comm = world->comm(static_cast<int>(r));
    ASSERT_TRUE(
        comm.allreduce(send[r].data(), second[r].data(), kExhaustionFaultCount, DataType::kInt32, ReduceOp::kMax)
            .isOk());
    EXPECT_EQ(comm.scratchBytesHeld(), 256 * kExhaustionFaultKiB);
  }
  ASSERT_TRUE(world->completeAll().isOk());
  EXPECT_TRUE(world->simWorld()->raceReports().empty()) << world->simWorld()->raceReports().front();
  // sum over ranks of (i % 1009) * (r + 1) is (i % 1009) * 10; the max is (i % 1009) * 4.
  for (std::size_t r = 0; r < kN; ++r) {
    for (std::size_t i = 0; i < kExhaustionFaultCount; ++i) {
      ASSERT_EQ(first[r][i], static_cast<std::int32_t>((i % 1009) * 10)) << "rank " << r << " element " << i;
      ASSERT_EQ(second[r][i], static_cast<std::int32_t>((i % 1009) * 4)) << "rank " << r << " element " << i;
    }
  }
  expectSymmetricStats(*world);
}

TEST(PoolExhaustion, PersistentExhaustionIsATypedErrorOnEveryRankAndTheCommunicatorRecovers) {
  auto world = makeWorld(poolConfig());
  ASSERT_NE(world, nullptr);
  releaseScratchOnEveryRank(*world);
  std::vector<SymmetricBlock> held =
      holdOnEveryRank(*world, kPoolBytes - 32 * kExhaustionFaultKiB);  // under the 64 KiB minimum
  ASSERT_EQ(held.size(), static_cast<std::size_t>(kExhaustionFaultRanks));
  std::vector<float> send(kExhaustionFaultCount, 1.0f), recv(kExhaustionFaultCount, -1.0f);
  for (int r = 0; r < kExhaustionFaultRanks; ++r) {
    const Status status =
        world->comm(r).allreduce(send.data(), recv.data(), kExhaustionFaultCount, DataType::kFloat32, ReduceOp::kSum);
    ASSERT_EQ(status.code(), ErrorCode::kOutOfMemory) << "rank " << r << ": " << status.toString();
    const std::string& message = status.message();
    EXPECT_NE(message.find("rank " + std::to_string(r)), std::string::npos) << message;
    EXPECT_NE(message.find("minimum scratch of 65536 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("PEERREDUCE_POOL_BYTES"), std::string::npos) << message;  // the setting to raise
    EXPECT_NE(message.find("32768"), std::string::npos) << message;  // what is free / the largest free block
    EXPECT_EQ(world->comm(r).scratchBytesHeld(), 0u);
  }
  // Nothing was enqueued and nothing was written.
  ASSERT_TRUE(world->completeAll().isOk());
  for (float v : recv) ASSERT_EQ(v, -1.0f);
  const PoolStats stats = expectSymmetricStats(*world);
  EXPECT_EQ(stats.failed_allocations, 1u);
  EXPECT_EQ(stats.bytes_in_use, kPoolBytes - 32 * kExhaustionFaultKiB);

  // A second attempt fails the same way: the error is persistent while the memory is held.
  for (int r = 0; r < kExhaustionFaultRanks; ++r) {
    EXPECT_EQ(world->comm(r)
                  .allreduce(send.data(), recv.data(), kExhaustionFaultCount, DataType::kFloat32, ReduceOp::kSum)
                  .code(),
              ErrorCode::kOutOfMemory);
  }
  EXPECT_EQ(expectSymmetricStats(*world).failed_allocations, 2u);

  held.clear();
  EXPECT_EQ(runCheckedCase(*world, 4), std::uint64_t{2} * kExhaustionFaultRanks);
  EXPECT_EQ(expectSymmetricStats(*world).bytes_in_use, kExhaustionFaultScratchBytes);
}

TEST(PoolExhaustion, QuotaExhaustionNamesTheQuotaSetting) {
  Config config = poolConfig();
  config.memory.pool_quota_bytes = 2 * kExhaustionFaultMiB;
  auto world = makeWorld(config);
  ASSERT_NE(world, nullptr);
  // The quota, not the pool, stops this block: 1 MiB of scratch + 1 MiB fits, one byte more does not.
  std::vector<SymmetricBlock> held = holdOnEveryRank(*world, 1 * kExhaustionFaultMiB);
  auto refused = world->comm(0).allocateSymmetric(16);
  ASSERT_EQ(refused.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_NE(refused.status().message().find("PEERREDUCE_POOL_QUOTA_BYTES"), std::string::npos)
      << refused.status().toString();
  EXPECT_NE(refused.status().message().find("allocateSymmetric(16) on rank 0"), std::string::npos)
      << refused.status().toString();
  // Keep the pools symmetric: the other ranks make the same (failing) call.
  for (int r = 1; r < kExhaustionFaultRanks; ++r) EXPECT_FALSE(world->comm(r).allocateSymmetric(16).isOk());
  EXPECT_EQ(expectSymmetricStats(*world).failed_allocations, 1u);

  // Under the quota, scratch squeezed by the held block still falls back rather than failing.
  releaseScratchOnEveryRank(*world);
  held.clear();
  held = holdOnEveryRank(*world, 1 * kExhaustionFaultMiB + 896 * kExhaustionFaultKiB);  // 128 KiB left under the quota
  runCheckedCase(*world, 5);
  for (int r = 0; r < kExhaustionFaultRanks; ++r)
    EXPECT_EQ(world->comm(r).scratchBytesHeld(), 128 * kExhaustionFaultKiB) << "rank " << r;
}

TEST(PoolExhaustion, DefragmentMovesIdleScratchIntoTheHoleBelowIt) {
  Config config = poolConfig();
  config.memory.defrag_threshold = 1.0;  // never automatically: this test asks for it
  auto world = makeWorld(config);
  ASSERT_NE(world, nullptr);
  // [hole 512 KiB][scratch 1 MiB][free]: the scratch is idle (one handle), so it may move down.
  releaseScratchOnEveryRank(*world);
  std::vector<SymmetricBlock> held = holdOnEveryRank(*world, 512 * kExhaustionFaultKiB);
  runCheckedCase(*world, 6);
  held.clear();
  PoolStats stats = expectSymmetricStats(*world);
  EXPECT_EQ(stats.free_blocks, 2u);
  EXPECT_GT(stats.fragmentation, 0.0);
  for (int r = 0; r < kExhaustionFaultRanks; ++r) EXPECT_EQ(world->comm(r).defragment(), 1u) << "rank " << r;
  stats = expectSymmetricStats(*world);
  EXPECT_EQ(stats.free_blocks, 1u);
  EXPECT_EQ(stats.fragmentation, 0.0);
  EXPECT_EQ(stats.blocks_moved, 1u);
  EXPECT_EQ(stats.bytes_moved, kExhaustionFaultScratchBytes);
  // A user block never moves, and the moved scratch still works.
  held = holdOnEveryRank(*world, 64 * kExhaustionFaultKiB);
  const std::size_t user_offset = held.front().offset();
  for (int r = 0; r < kExhaustionFaultRanks; ++r) EXPECT_EQ(world->comm(r).defragment(), 0u);
  EXPECT_EQ(held.front().offset(), user_offset);
  EXPECT_EQ(runCheckedCase(*world, 7), std::uint64_t{2} * kExhaustionFaultRanks);
}

TEST(PoolExhaustion, ScratchLargerThanThePoolIsRejectedAtCreationNamingBothSettings) {
  Config config = poolConfig();
  config.scratch_bytes = 8 * kExhaustionFaultMiB;
  auto world = makeSimTestWorld(2, sim::SimOptions{}, config);
  ASSERT_FALSE(world.isOk());
  EXPECT_EQ(world.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(world.status().message().find("PEERREDUCE_POOL_BYTES"), std::string::npos) << world.status().toString();
  EXPECT_NE(world.status().message().find("PEERREDUCE_SCRATCH_BYTES"), std::string::npos) << world.status().toString();
}

}  // namespace
}  // namespace peerreduce::testing
