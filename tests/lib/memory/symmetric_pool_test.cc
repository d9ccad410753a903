// SymmetricPool: behaviour examples and every error path (each message names the value or the setting).
#include "memory/symmetric_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "text_contains.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kSymmetricPoolKiB = 1024;

SymmetricPoolOptions smallOptions(std::size_t capacity = 64 * kSymmetricPoolKiB) {
  SymmetricPoolOptions o;
  o.capacity_bytes = capacity;
  o.region_granularity_bytes = 4 * kSymmetricPoolKiB;
  o.default_alignment_bytes = 16;
  o.defrag_threshold = 1.0;  // no automatic compaction unless a test asks for it
  return o;
}

SymmetricPool makePool(const SymmetricPoolOptions& o) {
  auto pool = SymmetricPool::create(o);
  EXPECT_TRUE(pool.isOk()) << pool.status().toString();
  return std::move(pool).value();
}

PoolBlock mustAllocate(SymmetricPool& pool, std::size_t bytes, BlockKind kind = BlockKind::kUserBuffer,
                       std::size_t alignment = 0) {
  auto block = pool.allocate(bytes, kind, alignment);
  EXPECT_TRUE(block.isOk()) << block.status().toString();
  return block.isOk() ? std::move(block).value() : PoolBlock();
}

using peerreduce::testing::mentions;

TEST(SymmetricPool, CreateRejectsBadOptionsNamingTheSetting) {
  const auto expectInvalid = [](SymmetricPoolOptions o, const char* words) {
    auto pool = SymmetricPool::create(o);
    ASSERT_FALSE(pool.isOk());
    EXPECT_EQ(pool.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(mentions(pool.status(), words)) << pool.status().toString();
  };
  SymmetricPoolOptions o = smallOptions();
  o.capacity_bytes = 0;
  expectInvalid(o, "PEERREDUCE_POOL_BYTES");
  o = smallOptions();
  o.capacity_bytes = 6 * kSymmetricPoolKiB;  // not a multiple of the 4 KiB granularity
  expectInvalid(o, "6144");
  o = SymmetricPoolOptions{};
  o.capacity_bytes = kIpcGranularityBytes + 4096;  // GPU default granularity: whole 2 MiB granules only
  expectInvalid(o, "PEERREDUCE_POOL_BYTES");
  o = smallOptions();
  o.capacity_bytes = kMaxPoolBytes + o.region_granularity_bytes;
  expectInvalid(o, "PEERREDUCE_POOL_BYTES");
  o = smallOptions();
  o.region_granularity_bytes = 3000;
  expectInvalid(o, "granularity 3000");
  o = smallOptions();
  o.default_alignment_bytes = 8;
  expectInvalid(o, "PEERREDUCE_POOL_ALIGNMENT");
  o = smallOptions();
  o.default_alignment_bytes = 48;
  expectInvalid(o, "48");
  o = smallOptions();
  o.quota_bytes = o.capacity_bytes + 1;
  expectInvalid(o, "PEERREDUCE_POOL_QUOTA_BYTES");
  o = smallOptions();
  o.defrag_threshold = 1.5;
  expectInvalid(o, "PEERREDUCE_POOL_DEFRAG_THRESHOLD");
  o.defrag_threshold = std::nan("");
  expectInvalid(o, "PEERREDUCE_POOL_DEFRAG_THRESHOLD");
  o = smallOptions();
  o.max_blocks = 0;
  expectInvalid(o, "max_blocks 0");
  o = smallOptions();
  o.rank = 3;
  o.capacity_bytes = 0;
  expectInvalid(o, "rank 3");
}

TEST(SymmetricPool, DefaultsMatchTheDocumentedSettings) {
  SymmetricPool pool = makePool(SymmetricPoolOptions{});
  EXPECT_EQ(pool.capacity(), kDefaultPoolBytes);
  EXPECT_EQ(pool.capacity() % kIpcGranularityBytes, 0u);
  PoolBlock b = mustAllocate(pool, 1);
  EXPECT_EQ(b.alignment(), kDefaultPoolAlignmentBytes);
  EXPECT_EQ(b.size(), kMinPoolAlignmentBytes);  // sizes round up to 16
  const SymmetricPoolOptions from = SymmetricPoolOptions::fromSettings(MemorySettings{}, 2);
  EXPECT_EQ(from.capacity_bytes, kDefaultPoolBytes);
  EXPECT_EQ(from.region_granularity_bytes, kIpcGranularityBytes);
  EXPECT_EQ(from.rank, 2);
  auto from_settings = SymmetricPool::create(from);
  ASSERT_TRUE(from_settings.isOk());
  EXPECT_EQ(from_settings->options().default_alignment_bytes, kDefaultPoolAlignmentBytes);
}

TEST(SymmetricPool, AllocateRejectsBadArgumentsAndChangesNothing) {
  SymmetricPoolOptions o = smallOptions();
  o.rank = 5;
  SymmetricPool pool = makePool(o);
  PoolBlock keep = mustAllocate(pool, 100);
  const PoolStats before = pool.stats();
  const auto blocks_before = pool.blocks();
  const auto expectInvalid = [&](StatusOr<PoolBlock> r, const char* words) {
    ASSERT_FALSE(r.isOk());
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(mentions(r.status(), words)) << r.status().toString();
    EXPECT_TRUE(mentions(r.status(), "rank 5")) << r.status().toString();
  };
  expectInvalid(pool.allocate(0, BlockKind::kScratch), "0 bytes");
  expectInvalid(pool.allocate(64, BlockKind::kScratch, 24), "alignment 24");
  expectInvalid(pool.allocate(64, BlockKind::kScratch, 8), "alignment 8");
  expectInvalid(pool.allocate(64, BlockKind::kScratch, std::size_t{4} << 20), "alignment 4194304");
  expectInvalid(pool.allocate(64, static_cast<BlockKind>(7)), "kind 7");
  expectInvalid(pool.allocateBestEffort(64, 128, BlockKind::kScratch), "minimum 128 exceeds the preferred size 64");
  expectInvalid(pool.allocateBestEffort(64, 0, BlockKind::kScratch), "0 bytes");
  EXPECT_EQ(pool.stats(), before);  // invalid arguments are not even counted as failures
  EXPECT_EQ(pool.blocks(), blocks_before);
}

TEST(SymmetricPool, ExhaustionSaysWhatWasAskedWhatIsFreeAndWhichSettingToRaise) {
  SymmetricPool pool = makePool(smallOptions());
  PoolBlock a = mustAllocate(pool, 48 * kSymmetricPoolKiB);
  auto r = pool.allocate(32 * kSymmetricPoolKiB, BlockKind::kScratch);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kOutOfMemory);
  const std::string& m = r.status().message();
  EXPECT_TRUE(mentions(r.status(), "cannot allocate 32768 bytes of scratch")) << m;
  EXPECT_TRUE(mentions(r.status(), "16384 of 65536 bytes free")) << m;
  EXPECT_TRUE(mentions(r.status(), "largest free block 16384")) << m;
  EXPECT_TRUE(mentions(r.status(), "raise PEERREDUCE_POOL_BYTES")) << m;
  EXPECT_EQ(pool.stats().failed_allocations, 1u);
  // More than the whole pool, up to SIZE_MAX: still a typed error, no overflow.
  r = pool.allocate(std::numeric_limits<std::size_t>::max(), BlockKind::kScratch);
  EXPECT_EQ(r.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_TRUE(mentions(r.status(), std::to_string(std::numeric_limits<std::size_t>::max())));
}

TEST(SymmetricPool, QuotaIsEnforcedAndNamedInTheError) {
  SymmetricPool pool = makePool(smallOptions());
  ASSERT_TRUE(pool.setQuota(16 * kSymmetricPoolKiB).isOk());
  PoolBlock a = mustAllocate(pool, 12 * kSymmetricPoolKiB);
  auto r = pool.allocate(8 * kSymmetricPoolKiB, BlockKind::kScratch);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_TRUE(mentions(r.status(), "PEERREDUCE_POOL_QUOTA_BYTES")) << r.status().toString();
  EXPECT_TRUE(mentions(r.status(), "12288 bytes in use of a quota of 16384")) << r.status().toString();
  // A quota below what is in use is allowed; it only stops new allocations.
  ASSERT_TRUE(pool.setQuota(4 * kSymmetricPoolKiB).isOk());
  EXPECT_EQ(pool.stats().quota_bytes, 4 * kSymmetricPoolKiB);
  EXPECT_FALSE(pool.allocate(16, BlockKind::kScratch).isOk());
  const Status too_big = pool.setQuota(pool.capacity() + 1);
  EXPECT_EQ(too_big.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(mentions(too_big, "PEERREDUCE_POOL_QUOTA_BYTES"));
  ASSERT_TRUE(pool.setQuota(0).isOk());  // 0 = no quota
  EXPECT_EQ(pool.stats().quota_bytes, pool.capacity());
  EXPECT_TRUE(pool.allocate(16, BlockKind::kScratch).isOk());
}

TEST(SymmetricPool, TheLiveBlockLimitIsATypedError) {
  SymmetricPoolOptions o = smallOptions();
  o.max_blocks = 3;
  SymmetricPool pool = makePool(o);
  std::vector<PoolBlock> blocks;
  for (int i = 0; i < 3; ++i) blocks.push_back(mustAllocate(pool, 16));
  auto r = pool.allocate(16, BlockKind::kFlags);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_TRUE(mentions(r.status(), "maximum of 3 live blocks")) << r.status().toString();
  EXPECT_TRUE(mentions(r.status(), "max_blocks")) << r.status().toString();
  blocks.pop_back();
  EXPECT_TRUE(pool.allocate(16, BlockKind::kFlags).isOk());
}

TEST(SymmetricPool, BestFitTakesTheSmallestHoleThenTheLowestOffset) {
  SymmetricPool pool = makePool(smallOptions());
  std::vector<PoolBlock> b;
  for (std::size_t size : {4 * kSymmetricPoolKiB, 1 * kSymmetricPoolKiB, 2 * kSymmetricPoolKiB, 1 * kSymmetricPoolKiB,
                           1 * kSymmetricPoolKiB, 1 * kSymmetricPoolKiB}) {
    b.push_back(mustAllocate(pool, size));
  }
  // Holes of 4 KiB @0, 2 KiB @5K, 1 KiB @8K; the tail is the largest.
  const std::size_t hole_1k = b[4].offset();
  b[0].reset();
  b[2].reset();
  b[4].reset();
  EXPECT_EQ(mustAllocate(pool, 1000).offset(), hole_1k);  // smallest hole that fits
  EXPECT_EQ(mustAllocate(pool, 2048).offset(), 5 * kSymmetricPoolKiB);
  PoolBlock in_4k = mustAllocate(pool, 3 * kSymmetricPoolKiB);
  EXPECT_EQ(in_4k.offset(), 0u);
  PoolBlock in_tail = mustAllocate(pool, 1024);  // the 1 KiB left in the 4 KiB hole is the best fit
  EXPECT_EQ(in_tail.offset(), 3 * kSymmetricPoolKiB);
}

TEST(SymmetricPool, AlignmentPaddingStaysFreeAndUsable) {
  SymmetricPool pool = makePool(smallOptions());
  PoolBlock a = mustAllocate(pool, 16);
  PoolBlock big = mustAllocate(pool, 100, BlockKind::kFlags, 4096);
  EXPECT_EQ(big.offset(), 4096u);
  EXPECT_EQ(big.alignment(), 4096u);
  EXPECT_EQ(big.size(), 112u);
  // The padding [16, 4096) is a free block that a small request fills (best fit).
  PoolBlock small = mustAllocate(pool, 32);
  EXPECT_EQ(small.offset(), 16u);
  EXPECT_TRUE(pool.checkConsistency().isOk());
}

TEST(SymmetricPool, FreedNeighboursCoalesce) {
  SymmetricPool pool = makePool(smallOptions());
  PoolBlock a = mustAllocate(pool, 8 * kSymmetricPoolKiB);
  PoolBlock b = mustAllocate(pool, 8 * kSymmetricPoolKiB);
  PoolBlock c = mustAllocate(pool, 8 * kSymmetricPoolKiB);
  PoolBlock d = mustAllocate(pool, 8 * kSymmetricPoolKiB);
  a.reset();
  c.reset();
  EXPECT_EQ(pool.stats().free_blocks, 3u);
  b.reset();  // joins a's and c's holes
  PoolStats s = pool.stats();
  EXPECT_EQ(s.free_blocks, 2u);
  EXPECT_EQ(s.largest_free_block_bytes, 32 * kSymmetricPoolKiB);
  EXPECT_DOUBLE_EQ(s.fragmentation, 1.0 - 32.0 / 56.0);
  d.reset();
  s = pool.stats();
  EXPECT_EQ(s.free_blocks, 1u);
  EXPECT_EQ(s.largest_free_block_bytes, 64 * kSymmetricPoolKiB);
  EXPECT_EQ(s.fragmentation, 0.0);
  EXPECT_EQ(s.peak_bytes_in_use, 32 * kSymmetricPoolKiB);
  EXPECT_EQ(s.allocations, 4u);
}

TEST(SymmetricPool, HandlesShareOwnershipAndFreeExactlyOnce) {
  SymmetricPool pool = makePool(smallOptions());
  PoolBlock a = mustAllocate(pool, 1024);
  {
    PoolBlock copy = a;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the point
    PoolBlock assigned;
    assigned = copy;
    EXPECT_EQ(a.useCount(), 3u);
    a.reset();
    a.reset();  // a second reset of the same handle is a no-op
    EXPECT_EQ(pool.stats().live_blocks, 1u);
    EXPECT_EQ(copy.useCount(), 2u);
    PoolBlock& alias = assigned;  // through a reference: self-assignment keeps the reference
    assigned = alias;
    EXPECT_EQ(copy.useCount(), 2u);
    assigned = copy;  // assigning a handle of the same block keeps the count
    EXPECT_EQ(copy.useCount(), 2u);
    PoolBlock moved = std::move(assigned);
    EXPECT_FALSE(assigned.valid());  // NOLINT(bugprone-use-after-move): moved-from handles are empty
    EXPECT_EQ(moved.useCount(), 2u);
  }
  EXPECT_EQ(pool.stats().live_blocks, 0u);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
  PoolBlock empty;
  EXPECT_EQ(empty.offset(), 0u);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.useCount(), 0u);
}

TEST(SymmetricPool, HandlesOutliveThePoolSafely) {
  PoolBlock survivor;
  {
    SymmetricPool pool = makePool(smallOptions());
    survivor = mustAllocate(pool, 4096, BlockKind::kScratch);
  }
  EXPECT_TRUE(survivor.valid());
  EXPECT_EQ(survivor.offset(), 0u);
  EXPECT_EQ(survivor.size(), 4096u);
  PoolBlock copy = survivor;
  survivor.reset();
  copy.reset();  // the last handle frees the bookkeeping (ASan checks for leaks and use after free)
}

TEST(SymmetricPool, DefragmentMovesOnlyIdleScratch) {
  SymmetricPool pool = makePool(smallOptions());
  PoolBlock hole1 = mustAllocate(pool, 4 * kSymmetricPoolKiB);
  PoolBlock scratch = mustAllocate(pool, 4 * kSymmetricPoolKiB, BlockKind::kScratch);
  PoolBlock hole2 = mustAllocate(pool, 4 * kSymmetricPoolKiB);
  PoolBlock flags = mustAllocate(pool, 4 * kSymmetricPoolKiB, BlockKind::kFlags);
  PoolBlock leased = mustAllocate(pool, 4 * kSymmetricPoolKiB, BlockKind::kScratch);
  PoolBlock lease = leased;  // a second handle pins it
  PoolBlock user = mustAllocate(pool, 4 * kSymmetricPoolKiB, BlockKind::kUserBuffer);
  PoolBlock idle = mustAllocate(pool, 4 * kSymmetricPoolKiB, BlockKind::kScratch);
  hole1.reset();
  hole2.reset();
  const std::size_t flags_at = flags.offset();
  const std::size_t leased_at = leased.offset();
  const std::size_t user_at = user.offset();
  const std::vector<BlockMove> moves = pool.defragment();
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0], (BlockMove{4 * kSymmetricPoolKiB, 0, 4 * kSymmetricPoolKiB}));  // slid into the hole below it
  EXPECT_EQ(moves[1], (BlockMove{24 * kSymmetricPoolKiB, 4 * kSymmetricPoolKiB,
                                 4 * kSymmetricPoolKiB}));  // jumped over pinned blocks into a hole
  EXPECT_EQ(scratch.offset(), 0u);                          // the handle follows its block
  EXPECT_EQ(idle.offset(), 4 * kSymmetricPoolKiB);
  EXPECT_EQ(flags.offset(), flags_at);
  EXPECT_EQ(leased.offset(), leased_at);
  EXPECT_EQ(user.offset(), user_at);
  const PoolStats s = pool.stats();
  EXPECT_EQ(s.defragmentations, 1u);
  EXPECT_EQ(s.blocks_moved, 2u);
  EXPECT_EQ(s.bytes_moved, 8 * kSymmetricPoolKiB);
  EXPECT_EQ(s.largest_free_block_bytes, 40 * kSymmetricPoolKiB);  // the tail grew by the moved block
  EXPECT_TRUE(pool.checkConsistency().isOk());
  EXPECT_TRUE(pool.defragment().empty());  // nothing left to move
}

TEST(SymmetricPool, CompactsAutomaticallyWhenFragmentationCrossesTheThreshold) {
  SymmetricPoolOptions o = smallOptions();
  o.defrag_threshold = 0.25;  // re-arms at or below 0.125
  SymmetricPool pool = makePool(o);
  PoolBlock low = mustAllocate(pool, 16 * kSymmetricPoolKiB);
  PoolBlock scratch = mustAllocate(pool, 16 * kSymmetricPoolKiB, BlockKind::kScratch);
  PoolBlock high = mustAllocate(pool, 16 * kSymmetricPoolKiB);
  PoolBlock end = mustAllocate(pool, 8 * kSymmetricPoolKiB);
  EXPECT_EQ(pool.stats().defragmentations, 0u);
  low.reset();  // free: 16 KiB at 0 and 8 KiB at the end -> fragmentation 1/3 >= 0.25
  EXPECT_EQ(pool.stats().defragmentations, 1u);
  EXPECT_EQ(scratch.offset(), 0u);
  // Fragmentation stays at 1/3 (fixed blocks hold it there): the trigger is disarmed, no pass per release.
  PoolBlock filler = mustAllocate(pool, 4 * kSymmetricPoolKiB);  // best fit: the 8 KiB tail
  EXPECT_EQ(filler.offset(), 56 * kSymmetricPoolKiB);
  filler.reset();
  EXPECT_GE(pool.stats().fragmentation, 0.25);
  EXPECT_EQ(pool.stats().defragmentations, 1u);
  // Falling to 0 re-arms it; the next crossing compacts again.
  high.reset();
  end.reset();
  EXPECT_EQ(pool.stats().fragmentation, 0.0);
  PoolBlock x = mustAllocate(pool, 16 * kSymmetricPoolKiB);
  PoolBlock y = mustAllocate(pool, 16 * kSymmetricPoolKiB, BlockKind::kScratch);
  PoolBlock z = mustAllocate(pool, 8 * kSymmetricPoolKiB);
  EXPECT_EQ(y.offset(), 32 * kSymmetricPoolKiB);
  x.reset();
  EXPECT_EQ(pool.stats().defragmentations, 2u);
  EXPECT_EQ(y.offset(), 16 * kSymmetricPoolKiB);
  EXPECT_TRUE(pool.checkConsistency().isOk());
}

TEST(SymmetricPool, NoAutomaticPassWithoutAnIdleMovableBlock) {
  SymmetricPoolOptions o = smallOptions();
  o.defrag_threshold = 0.25;
  SymmetricPool pool = makePool(o);
  PoolBlock low = mustAllocate(pool, 16 * kSymmetricPoolKiB);
  PoolBlock scratch = mustAllocate(pool, 16 * kSymmetricPoolKiB, BlockKind::kScratch);
  PoolBlock lease = scratch;  // pinned: not movable
  PoolBlock high = mustAllocate(pool, 16 * kSymmetricPoolKiB);
  PoolBlock end = mustAllocate(pool, 8 * kSymmetricPoolKiB);
  low.reset();  // fragmentation 1/3 >= 0.25, but nothing can move
  EXPECT_EQ(pool.stats().defragmentations, 0u);
  EXPECT_EQ(scratch.offset(), 16 * kSymmetricPoolKiB);
  lease.reset();
  end.reset();  // still above the threshold, now with an idle scratch block: the (still armed) trigger fires
  EXPECT_EQ(pool.stats().defragmentations, 1u);
  EXPECT_EQ(scratch.offset(), 0u);
}

TEST(SymmetricPool, BestEffortFallsBackToTheLargestBlockThatFits) {
  SymmetricPool pool = makePool(smallOptions());
  PoolBlock a = mustAllocate(pool, 40 * kSymmetricPoolKiB);
  PoolBlock b = mustAllocate(pool, 8 * kSymmetricPoolKiB);
  a.reset();  // free: 40 KiB at 0, 16 KiB at the end
  auto preferred = pool.allocateBestEffort(32 * kSymmetricPoolKiB, 4 * kSymmetricPoolKiB, BlockKind::kScratch);
  ASSERT_TRUE(preferred.isOk());
  EXPECT_EQ(preferred->size(), 32 * kSymmetricPoolKiB);  // fits: the preferred size
  auto fallback = pool.allocateBestEffort(32 * kSymmetricPoolKiB, 4 * kSymmetricPoolKiB, BlockKind::kScratch);
  ASSERT_TRUE(fallback.isOk());
  EXPECT_EQ(fallback->size(), 16 * kSymmetricPoolKiB);  // the largest that fits
  EXPECT_EQ(fallback->offset(), 48 * kSymmetricPoolKiB);
  auto none = pool.allocateBestEffort(32 * kSymmetricPoolKiB, 12 * kSymmetricPoolKiB, BlockKind::kScratch);
  ASSERT_FALSE(none.isOk());
  EXPECT_EQ(none.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_TRUE(mentions(none.status(), "at least 12288 (preferably 32768)")) << none.status().toString();
  // The quota caps the fallback as well.
  preferred->reset();
  ASSERT_TRUE(pool.setQuota(30 * kSymmetricPoolKiB).isOk());
  auto capped = pool.allocateBestEffort(64 * kSymmetricPoolKiB, 1, BlockKind::kScratch);
  ASSERT_TRUE(capped.isOk());
  EXPECT_EQ(capped->size(), 6 * kSymmetricPoolKiB);  // 30 KiB quota - 24 KiB in use
  auto over = pool.allocateBestEffort(64 * kSymmetricPoolKiB, 1, BlockKind::kScratch);
  ASSERT_FALSE(over.isOk());
  EXPECT_TRUE(mentions(over.status(), "PEERREDUCE_POOL_QUOTA_BYTES")) << over.status().toString();
}

TEST(SymmetricPool, OffsetOfChecksBoundsWithoutOverflow) {
  SymmetricPool pool = makePool(smallOptions());
  PoolBlock pad = mustAllocate(pool, 1024);
  PoolBlock b = mustAllocate(pool, 256);
  EXPECT_EQ(*offsetOf(b, 0, 256), 1024u);
  EXPECT_EQ(*offsetOf(b, 200, 56), 1224u);
  EXPECT_EQ(*offsetOf(b, 256, 0), 1280u);  // an empty range at the end is inside
  const auto expectOut = [&](std::size_t off, std::size_t n) {
    auto r = offsetOf(b, off, n);
    ASSERT_FALSE(r.isOk());
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(mentions(r.status(), "leaves the block of 256 bytes")) << r.status().toString();
  };
  expectOut(200, 57);
  expectOut(257, 0);
  expectOut(1, std::numeric_limits<std::size_t>::max());
  expectOut(std::numeric_limits<std::size_t>::max(), 2);
  EXPECT_EQ(offsetOf(PoolBlock(), 0, 0).status().code(), ErrorCode::kInvalidArgument);
}

TEST(SymmetricPool, ViewsGiveBoundsCheckedSpansOfTheRegion) {
  SymmetricPool pool = makePool(smallOptions());
  SymmetricPool other = makePool(smallOptions());
  std::vector<std::byte> region(pool.capacity());
  EXPECT_EQ(PoolView::create(pool, std::span<std::byte>(region).first(100)).status().code(),
            ErrorCode::kInvalidArgument);
  PoolView view = PoolView::create(pool, region).value();
  PoolBlock a = mustAllocate(pool, 512);
  PoolBlock b = mustAllocate(pool, 512);
  auto span = view.bytes(b, 16, 32);
  ASSERT_TRUE(span.isOk());
  EXPECT_EQ(span->data(), region.data() + 512 + 16);
  EXPECT_EQ(span->size(), 32u);
  std::memset(span->data(), 0x5a, span->size());
  EXPECT_EQ(view.bytes(b, 500, 13).status().code(), ErrorCode::kInvalidArgument);
  PoolBlock foreign = mustAllocate(other, 16);
  auto wrong = view.bytes(foreign, 0, 16);
  ASSERT_FALSE(wrong.isOk());
  EXPECT_TRUE(mentions(wrong.status(), "another pool"));
}

TEST(SymmetricPool, TheSameCallsGiveTheSameOffsetsOnEveryRank) {
  std::vector<std::vector<BlockInfo>> layouts;
  for (int rank = 0; rank < 4; ++rank) {
    SymmetricPoolOptions o = smallOptions();
    o.rank = rank;
    o.defrag_threshold = 0.3;
    SymmetricPool pool = makePool(o);
    std::vector<PoolBlock> live;
    for (std::size_t i = 0; i < 40; ++i) {  // a fixed, irregular sequence
      const std::size_t bytes = 16 + (i * 7919) % 3000;
      const BlockKind kind = i % 3 == 0 ? BlockKind::kScratch : BlockKind::kUserBuffer;
      auto block = pool.allocate(bytes, kind, std::size_t{16} << (i % 5));
      if (block.isOk()) live.push_back(std::move(*block));
      if (i % 4 == 3 && !live.empty()) live.erase(live.begin() + static_cast<std::ptrdiff_t>((i * 31) % live.size()));
    }
    layouts.push_back(pool.blocks());
  }
  for (int rank = 1; rank < 4; ++rank) EXPECT_EQ(layouts[static_cast<std::size_t>(rank)], layouts[0]);
}

TEST(SymmetricPool, StatsAreDescribedOnOneLine) {
  SymmetricPool pool = makePool(smallOptions());
  PoolBlock a = mustAllocate(pool, 100);
  const std::string line = describe(pool.stats());
  for (const char* key : {"capacity_bytes=65536", "bytes_in_use=112", "peak_bytes_in_use=112", "allocations=1",
                          "failed_allocations=0", "free_blocks=1", "largest_free_block_bytes=65424",
                          "fragmentation=0.000000", "defragmentations=0", "live_blocks=1/4096"}) {
    EXPECT_NE(line.find(key), std::string::npos) << key << " in " << line;
  }
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_STREQ(blockKindName(BlockKind::kFlags), "flags");
  EXPECT_STREQ(blockKindName(static_cast<BlockKind>(9)), "unknown kind");
}

}  // namespace
}  // namespace peerreduce::testing
