// ChannelLeases alone, over a symmetric pool: eager work always on channel 0, each graph capture on a
// capture channel of its own in the order captures appear (round robin once they run out), every channel
// finds scratch with the default sizes, leases are pinned by copies and given back by releaseAll, a
// channel outside the range is an internal error, and an exhausted pool is a typed error naming the
// setting.
#include "api/channel_leases.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "peerreduce/config.h"
#include "peerreduce/plan.h"

namespace peerreduce {
namespace {

SymmetricPool makePool(std::size_t bytes) {
  SymmetricPoolOptions options;
  options.capacity_bytes = bytes;
  options.region_granularity_bytes = 4096;
  return SymmetricPool::create(options).value();
}

// The defaults of a communicator: 32 MiB preferred in a 128 MiB pool.
ScratchSizes defaultSizes() {
  return ScratchSizes{.preferred_bytes = kDefaultScratchBytes,
                      .minimum_bytes = kMinScratchBytes,
                      .alignment_bytes = kScratchSlotAlignBytes};
}

TEST(ChannelLeases, EagerWorkIsChannelZeroAndEachCaptureGetsAChannelOfItsOwnByFirstAppearance) {
  SymmetricPool pool = makePool(kDefaultPoolBytes);
  ChannelLeases leases(pool, defaultSizes(), 2);
  EXPECT_EQ(leases.channelOf(0), 0);
  EXPECT_EQ(leases.channelsUsed(), 1);
  const std::uint64_t captures[] = {907, 31, 5000};
  for (int i = 0; i < kMaxChannels - 1; ++i) {
    EXPECT_EQ(leases.channelOf(captures[i]), i + 1) << "capture " << captures[i];
    EXPECT_EQ(leases.channelOf(0), 0) << "eager work stays on channel 0 between captures";
  }
  for (int i = 0; i < kMaxChannels - 1; ++i) {
    EXPECT_EQ(leases.channelOf(captures[i]), i + 1) << "a capture keeps its channel";
  }
  EXPECT_EQ(leases.channelsUsed(), kMaxChannels);
  // A capture more than there are capture channels takes the oldest capture's channel, and so on.
  EXPECT_EQ(leases.channelOf(77), 1);
  EXPECT_EQ(leases.channelOf(78), 2);
  EXPECT_EQ(leases.channelOf(77), 1);
}

TEST(ChannelLeases, TheSameCallsGiveTheSameChannelsOnEveryRankWhateverTheCaptureIdsAre) {
  // Capture ids differ between processes; channels depend only on the order captures appear.
  SymmetricPool pool_a = makePool(kDefaultPoolBytes);
  SymmetricPool pool_b = makePool(kDefaultPoolBytes);
  ChannelLeases a(pool_a, defaultSizes(), 0);
  ChannelLeases b(pool_b, defaultSizes(), 1);
  const std::vector<std::uint64_t> ids_a = {0, 12, 12, 0, 13, 14, 15, 12, 0, 16};
  const std::vector<std::uint64_t> ids_b = {0, 900, 900, 0, 4, 77, 8, 900, 0, 1};
  for (std::size_t i = 0; i < ids_a.size(); ++i) {
    EXPECT_EQ(a.channelOf(ids_a[i]), b.channelOf(ids_b[i])) << "call " << i;
  }
}

TEST(ChannelLeases, EveryChannelFindsScratchWithTheDefaultsAndKeepsItsLease) {
  SymmetricPool pool = makePool(kDefaultPoolBytes);
  ChannelLeases leases(pool, defaultSizes(), 2);
  ASSERT_TRUE(leases.leaseFirst().isOk());  // at creation
  for (int c = 0; c < kMaxChannels; ++c) {
    auto scratch = leases.lease(c);
    ASSERT_TRUE(scratch.isOk()) << "channel " << c << ": " << scratch.status().toString();
    EXPECT_EQ(scratch->size(), kDefaultScratchBytes)
        << "channel " << c << ": a captured operation runs in as few segments as an eager one";
    EXPECT_EQ(scratch->offset() % kScratchSlotAlignBytes, 0u);
  }
  EXPECT_LE(leases.bytesHeld(), kDefaultPoolBytes);
  const PoolBlock first = *leases.lease(0);
  const PoolBlock again = *leases.lease(0);
  EXPECT_EQ(first.offset(), again.offset()) << "a lease of its target size is reused";
  EXPECT_EQ(first.size(), kDefaultScratchBytes) << "eager work gets the preferred size";
}

TEST(ChannelLeases, AChannelOutsideTheRangeIsAnInternalErrorThatTakesNothing) {
  SymmetricPool pool = makePool(kDefaultPoolBytes);
  ChannelLeases leases(pool, defaultSizes(), 0);
  for (int channel : {-1, kMaxChannels}) {
    auto scratch = leases.lease(channel);
    ASSERT_FALSE(scratch.isOk());
    EXPECT_EQ(scratch.status().code(), ErrorCode::kInternal);
    EXPECT_NE(scratch.status().message().find("channel " + std::to_string(channel)), std::string::npos);
  }
  EXPECT_EQ(leases.bytesHeld(), 0u);
}

TEST(ChannelLeases, ReleaseAllGivesEveryLeaseBackAndTheNextOperationTakesANewOne) {
  SymmetricPool pool = makePool(kDefaultPoolBytes);
  ChannelLeases leases(pool, defaultSizes(), 0);
  for (int c = 0; c < 2; ++c) ASSERT_TRUE(leases.lease(c).isOk());
  EXPECT_GT(leases.bytesHeld(), 0u);
  leases.releaseAll();
  EXPECT_EQ(leases.bytesHeld(), 0u);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  EXPECT_TRUE(leases.lease(1).isOk());
  EXPECT_GT(leases.bytesHeld(), 0u);
}

TEST(ChannelLeases, AnExhaustedPoolIsAnOutOfMemoryErrorNamingTheSetting) {
  SymmetricPool pool = makePool(std::size_t{1} << 20);
  auto filler = pool.allocate(pool.stats().largest_free_block_bytes, BlockKind::kUserBuffer);
  ASSERT_TRUE(filler.isOk()) << filler.status().toString();
  ChannelLeases leases(pool, defaultSizes(), 1);
  auto scratch = leases.lease(0);
  ASSERT_FALSE(scratch.isOk());
  EXPECT_EQ(scratch.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_NE(scratch.status().message().find("minimum scratch"), std::string::npos) << scratch.status().toString();
  EXPECT_NE(scratch.status().message().find("PEERREDUCE_SCRATCH_BYTES"), std::string::npos);
  filler->reset();
  EXPECT_TRUE(leases.lease(0).isOk()) << "the lease is taken once the pool has room again";
}

}  // namespace
}  // namespace peerreduce
