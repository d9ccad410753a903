// StreamLeases alone, over a symmetric pool: streams numbered by first use, every one of kMaxStreams
// streams finds scratch with the default sizes, one stream more is a typed error that changes nothing,
// leases are pinned by copies and given back by releaseAll, and an exhausted pool is a typed error
// naming the setting.
#include "api/stream_leases.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "peerreduce/config.h"
#include "peerreduce/plan.h"

namespace peerreduce {
namespace {

StreamHandle stream(int s) { return reinterpret_cast<StreamHandle>(static_cast<std::uintptr_t>(0x100 + s)); }

SymmetricPool makePool(std::size_t bytes) {
  SymmetricPoolOptions options;
  options.capacity_bytes = bytes;
  options.region_granularity_bytes = 4096;
  return SymmetricPool::create(options).value();
}

// The defaults of a communicator: 32 MiB preferred in a 64 MiB pool.
ScratchSizes defaultSizes() {
  return ScratchSizes{.preferred_bytes = kDefaultScratchBytes,
                      .minimum_bytes = kMinScratchBytes,
                      .alignment_bytes = kScratchSlotAlignBytes};
}

TEST(StreamLeases, StreamsAreNumberedByFirstUseAndEveryOneFindsScratchWithTheDefaults) {
  SymmetricPool pool = makePool(kDefaultPoolBytes);
  StreamLeases leases(pool, defaultSizes(), 2);
  ASSERT_TRUE(leases.leaseFirst().isOk());  // at creation, before any stream is known
  for (int s = 0; s < kMaxStreams; ++s) {
    auto slot = leases.slotOf(stream(s));
    ASSERT_TRUE(slot.isOk()) << slot.status().toString();
    EXPECT_EQ(*slot, s);
    EXPECT_EQ(*leases.slotOf(stream(s)), s) << "the same stream keeps its slot";
    auto scratch = leases.lease(*slot);
    ASSERT_TRUE(scratch.isOk()) << "stream " << s << ": " << scratch.status().toString();
    EXPECT_GE(scratch->size(), kMinScratchBytes);
    EXPECT_EQ(scratch->offset() % kScratchSlotAlignBytes, 0u);
  }
  EXPECT_EQ(leases.streamsUsed(), kMaxStreams);
  EXPECT_LE(leases.bytesHeld(), kDefaultPoolBytes);
  const PoolBlock first = *leases.lease(0);
  const PoolBlock again = *leases.lease(0);
  EXPECT_EQ(first.offset(), again.offset()) << "a lease of its target size is reused";
  EXPECT_EQ(first.size(), again.size());
}

TEST(StreamLeases, OneStreamTooManyIsRefusedByNameAndChangesNothing) {
  SymmetricPool pool = makePool(kDefaultPoolBytes);
  StreamLeases leases(pool, defaultSizes(), 3);
  for (int s = 0; s < kMaxStreams; ++s) ASSERT_TRUE(leases.slotOf(stream(s)).isOk());
  auto extra = leases.slotOf(stream(kMaxStreams));
  ASSERT_FALSE(extra.isOk());
  EXPECT_EQ(extra.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(extra.status().message().find("at most " + std::to_string(kMaxStreams) + " streams"), std::string::npos);
  EXPECT_NE(extra.status().message().find("rank 3"), std::string::npos);
  EXPECT_EQ(leases.streamsUsed(), kMaxStreams);
  EXPECT_EQ(*leases.slotOf(stream(1)), 1);
}

TEST(StreamLeases, ASlotNeverGivenIsAnInternalError) {
  SymmetricPool pool = makePool(kDefaultPoolBytes);
  StreamLeases leases(pool, defaultSizes(), 0);
  auto scratch = leases.lease(1);
  ASSERT_FALSE(scratch.isOk());
  EXPECT_EQ(scratch.status().code(), ErrorCode::kInternal);
  EXPECT_EQ(leases.bytesHeld(), 0u);
}

TEST(StreamLeases, ReleaseAllGivesEveryLeaseBackAndTheNextOperationTakesANewOne) {
  SymmetricPool pool = makePool(kDefaultPoolBytes);
  StreamLeases leases(pool, defaultSizes(), 0);
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(leases.lease(*leases.slotOf(stream(s))).isOk());
  EXPECT_GT(leases.bytesHeld(), 0u);
  leases.releaseAll();
  EXPECT_EQ(leases.bytesHeld(), 0u);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  EXPECT_TRUE(leases.lease(1).isOk());
  EXPECT_GT(leases.bytesHeld(), 0u);
}

TEST(StreamLeases, AnExhaustedPoolIsAnOutOfMemoryErrorNamingTheSetting) {
  SymmetricPool pool = makePool(std::size_t{1} << 20);
  auto filler = pool.allocate(pool.stats().largest_free_block_bytes, BlockKind::kUserBuffer);
  ASSERT_TRUE(filler.isOk()) << filler.status().toString();
  StreamLeases leases(pool, defaultSizes(), 1);
  auto scratch = leases.lease(*leases.slotOf(stream(0)));
  ASSERT_FALSE(scratch.isOk());
  EXPECT_EQ(scratch.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_NE(scratch.status().message().find("minimum scratch"), std::string::npos) << scratch.status().toString();
  EXPECT_NE(scratch.status().message().find("PEERREDUCE_SCRATCH_BYTES"), std::string::npos);
  filler->reset();
  EXPECT_TRUE(leases.lease(0).isOk()) << "the lease is taken once the pool has room again";
}

}  // namespace
}  // namespace peerreduce
