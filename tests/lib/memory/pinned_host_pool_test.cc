// PinnedHostPool: size classes, reuse, LRU eviction, typed errors, the system allocator, destruction
// with blocks out, and concurrent use.
#include "memory/pinned_host_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "fake_host_allocator.h"
#include "text_contains.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kPinnedHostPoolKiB = 1024;

PinnedHostPoolOptions options(std::size_t limit) {
  PinnedHostPoolOptions o;
  o.limit_bytes = limit;
  o.min_block_bytes = 4 * kPinnedHostPoolKiB;
  o.alignment_bytes = 4 * kPinnedHostPoolKiB;
  return o;
}

using peerreduce::testing::mentions;

TEST(PinnedHostPool, SizeClassesArePowersOfTwoFromTheMinimum) {
  EXPECT_EQ(PinnedHostPool::sizeClassOf(1, 4096), 4096u);
  EXPECT_EQ(PinnedHostPool::sizeClassOf(4096, 4096), 4096u);
  EXPECT_EQ(PinnedHostPool::sizeClassOf(4097, 4096), 8192u);
  EXPECT_EQ(PinnedHostPool::sizeClassOf(std::size_t{3} << 20, 4096), std::size_t{4} << 20);
  EXPECT_EQ(PinnedHostPool::sizeClassOf(std::numeric_limits<std::size_t>::max(), 4096), 0u);
}

TEST(PinnedHostPool, CreateRejectsBadOptionsNamingTheSetting) {
  auto r = PinnedHostPool::create(options(100));
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(mentions(r.status(), "PEERREDUCE_PINNED_LIMIT_BYTES")) << r.status().toString();
  PinnedHostPoolOptions o = options(64 * kPinnedHostPoolKiB);
  o.min_block_bytes = 3000;
  EXPECT_TRUE(mentions(PinnedHostPool::create(o).status(), "min_block_bytes 3000"));
  o = options(64 * kPinnedHostPoolKiB);
  o.alignment_bytes = 8 * kPinnedHostPoolKiB;
  EXPECT_TRUE(mentions(PinnedHostPool::create(o).status(), "alignment 8192"));
}

TEST(PinnedHostPool, ReleasedBlocksAreReusedBySizeClass) {
  auto allocator = std::make_shared<FakeHostAllocator>();
  PinnedHostPool pool = PinnedHostPool::create(options(64 * kPinnedHostPoolKiB), allocator).value();
  void* first = nullptr;
  {
    PinnedBlock b = pool.acquire(5000).value();
    EXPECT_EQ(b.size(), 5000u);
    EXPECT_EQ(b.capacity(), 8 * kPinnedHostPoolKiB);
    EXPECT_TRUE(b.locked());
    first = b.data();
  }
  PinnedBlock again = pool.acquire(7000).value();  // same class: the same memory, no new allocation
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(again.id(), 1u);
  const PinnedStats s = pool.stats();
  EXPECT_EQ(s.acquisitions, 2u);
  EXPECT_EQ(s.reuses, 1u);
  EXPECT_EQ(s.system_allocations, 1u);
  EXPECT_EQ(s.bytes_pinned, 8 * kPinnedHostPoolKiB);
  EXPECT_EQ(allocator->liveCount(), 1u);
}

TEST(PinnedHostPool, EvictsTheLeastRecentlyReleasedIdleBlocks) {
  auto allocator = std::make_shared<FakeHostAllocator>();
  PinnedHostPool pool = PinnedHostPool::create(options(32 * kPinnedHostPoolKiB), allocator).value();
  {
    PinnedBlock a = pool.acquire(8 * kPinnedHostPoolKiB).value();   // id 1
    PinnedBlock b = pool.acquire(8 * kPinnedHostPoolKiB).value();   // id 2
    PinnedBlock c = pool.acquire(16 * kPinnedHostPoolKiB).value();  // id 3
    b.reset();                                                      // released first: least recently used
    c.reset();
    a.reset();
  }
  // 32 KiB pinned, all idle. 12 KiB is c's class (16 KiB): c is reused.
  PinnedBlock c2 = pool.acquire(12 * kPinnedHostPoolKiB).value();
  EXPECT_EQ(c2.id(), 3u);
  // 4 KiB is a new class: 4 KiB must be found, so b (oldest idle) is evicted, a stays.
  PinnedBlock d = pool.acquire(4 * kPinnedHostPoolKiB).value();
  EXPECT_EQ(d.id(), 4u);
  EXPECT_EQ(allocator->freed(), (std::vector<std::uint64_t>{2}));
  const PinnedStats s = pool.stats();
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.bytes_evicted, 8 * kPinnedHostPoolKiB);
  EXPECT_EQ(s.bytes_pinned, 28 * kPinnedHostPoolKiB);
  EXPECT_EQ(s.bytes_idle, 8 * kPinnedHostPoolKiB);
  EXPECT_LE(s.peak_bytes_pinned, 32 * kPinnedHostPoolKiB);
}

TEST(PinnedHostPool, RefusesWhenNothingCanBeEvictedAndChangesNothing) {
  auto allocator = std::make_shared<FakeHostAllocator>();
  PinnedHostPoolOptions o = options(16 * kPinnedHostPoolKiB);
  o.rank = 1;
  PinnedHostPool pool = PinnedHostPool::create(o, allocator).value();
  PinnedBlock a = pool.acquire(8 * kPinnedHostPoolKiB).value();
  PinnedBlock idle = pool.acquire(4 * kPinnedHostPoolKiB).value();
  idle.reset();
  const PinnedStats before = pool.stats();
  auto r = pool.acquire(16 * kPinnedHostPoolKiB);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_TRUE(mentions(r.status(), "rank 1: cannot pin 16384 bytes")) << r.status().toString();
  EXPECT_TRUE(mentions(r.status(), "8192 bytes are in use and 4096 idle")) << r.status().toString();
  EXPECT_TRUE(mentions(r.status(), "PEERREDUCE_PINNED_LIMIT_BYTES")) << r.status().toString();
  PinnedStats after = pool.stats();
  EXPECT_EQ(after.failures, before.failures + 1);
  after.failures = before.failures;
  EXPECT_EQ(after, before);  // in particular the idle block was not evicted for nothing
  auto too_big = pool.acquire(20 * kPinnedHostPoolKiB);
  EXPECT_TRUE(mentions(too_big.status(), "size class 32768) exceeds the pinned limit")) << too_big.status().toString();
  EXPECT_EQ(pool.acquire(0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(pool.acquire(std::numeric_limits<std::size_t>::max()).status().code(), ErrorCode::kOutOfMemory);
}

TEST(PinnedHostPool, ASystemFailureEvictsNothing) {
  auto allocator = std::make_shared<FakeHostAllocator>();
  PinnedHostPool pool = PinnedHostPool::create(options(16 * kPinnedHostPoolKiB), allocator).value();
  pool.acquire(16 * kPinnedHostPoolKiB).value().reset();  // one idle 16 KiB block
  allocator->failNextAllocation();
  auto r = pool.acquire(4 * kPinnedHostPoolKiB);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_TRUE(mentions(r.status(), "from fake")) << r.status().toString();
  EXPECT_EQ(pool.stats().blocks_idle, 1u);
  EXPECT_TRUE(allocator->freed().empty());
}

TEST(PinnedHostPool, UnlockableMemoryIsUsedAndCounted) {
  auto allocator = std::make_shared<FakeHostAllocator>(/*lock_fail_period=*/1);
  PinnedHostPool pool = PinnedHostPool::create(options(16 * kPinnedHostPoolKiB), allocator).value();
  PinnedBlock b = pool.acquire(100).value();
  EXPECT_FALSE(b.locked());
  EXPECT_EQ(pool.stats().lock_failures, 1u);
  EXPECT_EQ(pool.stats().blocks_unlocked, 1u);
  b.reset();
  EXPECT_EQ(pool.trim(), 4 * kPinnedHostPoolKiB);
  EXPECT_EQ(pool.stats().blocks_unlocked, 0u);
  EXPECT_EQ(allocator->misuse(), 0);
}

TEST(PinnedHostPool, TheSystemAllocatorPinsWhereAllowed) {
  PinnedHostPool pool = PinnedHostPool::create(options(1024 * kPinnedHostPoolKiB)).value();
  PinnedBlock b = pool.acquire(100 * kPinnedHostPoolKiB).value();
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % (4 * kPinnedHostPoolKiB), 0u);
  std::memset(b.data(), 1, b.capacity());
  const PinnedStats s = pool.stats();
  // Locked or not depends on RLIMIT_MEMLOCK here; either way it is accounted for.
  EXPECT_EQ(s.lock_failures, b.locked() ? 0u : 1u);
  EXPECT_EQ(s.bytes_pinned, 128 * kPinnedHostPoolKiB);
  const std::string line = describe(s);
  EXPECT_NE(line.find("bytes_pinned=131072"), std::string::npos) << line;
}

TEST(PinnedHostPool, TheSystemAllocatorRejectsBadRequests) {
  SystemHostAllocator allocator;
  EXPECT_EQ(allocator.allocate(0, 4096).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(allocator.allocate(64, 3000).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(allocator.allocate(std::numeric_limits<std::size_t>::max() - 10, 4096).status().code(),
            ErrorCode::kOutOfMemory);
  EXPECT_FALSE(allocator.name().empty());
  PinnedHostPool pool = PinnedHostPool::create(options(64 * kPinnedHostPoolKiB), systemHostAllocator()).value();
  EXPECT_EQ(pool.options().limit_bytes, 64 * kPinnedHostPoolKiB);
}

TEST(PinnedHostPool, DestroyingThePoolWithBlocksOutIsSafe) {
  auto allocator = std::make_shared<FakeHostAllocator>();
  PinnedBlock out;
  {
    PinnedHostPool pool = PinnedHostPool::create(options(64 * kPinnedHostPoolKiB), allocator).value();
    out = pool.acquire(8 * kPinnedHostPoolKiB).value();
    pool.acquire(4 * kPinnedHostPoolKiB).value().reset();  // idle: freed with the pool
  }
  EXPECT_EQ(allocator->liveCount(), 1u);
  std::memset(out.data(), 2, out.capacity());
  out.reset();
  EXPECT_EQ(allocator->liveCount(), 0u);
  EXPECT_EQ(allocator->misuse(), 0);
  PinnedBlock moved_from;
  PinnedBlock target = std::move(moved_from);
  EXPECT_FALSE(target.valid());
}

TEST(PinnedHostPool, ConcurrentAcquireAndReleaseKeepTheBooks) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 500;
  auto allocator = std::make_shared<FakeHostAllocator>();
  PinnedHostPool pool = PinnedHostPool::create(options(64 * kPinnedHostPoolKiB), allocator).value();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < kRounds; ++i) {
        auto b = pool.acquire(static_cast<std::size_t>(1 + (i * 997 + t * 131) % (12 * kPinnedHostPoolKiB)));
        if (b.isOk()) std::memset(b->data(), t, b->size());
      }
    });
  }
  for (auto& t : threads) t.join();
  const PinnedStats s = pool.stats();
  EXPECT_EQ(s.blocks_in_use, 0u);
  EXPECT_EQ(s.bytes_in_use, 0u);
  EXPECT_LE(s.peak_bytes_pinned, 64 * kPinnedHostPoolKiB);
  EXPECT_EQ(s.acquisitions + s.failures, static_cast<std::uint64_t>(kThreads * kRounds));
  EXPECT_EQ(s.acquisitions, s.reuses + s.system_allocations);
  EXPECT_EQ(allocator->liveBytes(), s.bytes_pinned);
}

}  // namespace
}  // namespace peerreduce::testing
