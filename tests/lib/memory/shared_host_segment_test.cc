// SharedHostSegment (memory/shared_host_segment.h) and SharedHostAllocator under a PinnedHostPool: the
// host-only half of host-staged links. Segments are created, mapped a second time by name (as a peer
// process does), unlinked, and every failure path leaves no name behind in /dev/shm.
#include "memory/shared_host_segment.h"

#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "memory/pinned_host_pool.h"
#include "memory/shared_host_allocator.h"
#include "text_contains.h"

namespace peerreduce::testing {
namespace {

using peerreduce::testing::mentions;

// Names this process has in /dev/shm now (create() puts the pid in every name).
std::vector<std::string> ourNames() {
  std::vector<std::string> names;
  const std::string prefix = "peerreduce-" + std::to_string(::getpid()) + "-";
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  return names;
}

TEST(SharedHostSegment, APeerMapsTheSamePagesByNameAndTheNameGoesWhenUnlinked) {
  auto owner = SharedHostSegment::create(10000);
  ASSERT_TRUE(owner.isOk()) << owner.status().toString();
  EXPECT_TRUE(owner->owner());
  EXPECT_TRUE(owner->linked());
  EXPECT_GE(owner->size(), 10000u);
  EXPECT_EQ(owner->size() % 4096, 0u);
  EXPECT_TRUE(SharedHostSegment::wellFormedName(owner->name())) << owner->name();
  EXPECT_LT(owner->name().size(), kMaxSharedNameBytes);
  EXPECT_EQ(static_cast<unsigned char*>(owner->data())[9999], 0);  // zero-filled

  auto peer = SharedHostSegment::open(owner->name(), 10000);
  ASSERT_TRUE(peer.isOk()) << peer.status().toString();
  EXPECT_FALSE(peer->owner());
  EXPECT_NE(peer->data(), owner->data());  // another mapping of the same pages
  std::memcpy(owner->data(), "staged", 7);
  EXPECT_STREQ(static_cast<const char*>(peer->data()), "staged");
  static_cast<char*>(peer->data())[9000] = 'x';
  EXPECT_EQ(static_cast<const char*>(owner->data())[9000], 'x');

  ASSERT_TRUE(owner->unlink().isOk());
  EXPECT_FALSE(owner->linked());
  EXPECT_TRUE(owner->unlink().isOk());  // a second unlink does nothing
  EXPECT_TRUE(ourNames().empty());
  // Mapped pages outlive the name.
  std::memcpy(peer->data(), "still", 6);
  EXPECT_STREQ(static_cast<const char*>(owner->data()), "still");
  auto late = SharedHostSegment::open(owner->name(), 10000);
  ASSERT_FALSE(late.isOk());
  EXPECT_EQ(late.status().code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(mentions(late.status(), "no longer exists")) << late.status().toString();
}

TEST(SharedHostSegment, AnOwnerThatDiesUnlinksAndNamesAreFresh) {
  std::string first;
  {
    auto a = SharedHostSegment::create(1);
    auto b = SharedHostSegment::create(1);
    ASSERT_TRUE(a.isOk() && b.isOk());
    EXPECT_NE(a->name(), b->name());
    first = a->name();
    EXPECT_EQ(ourNames().size(), 2u);
    SharedHostSegment moved = std::move(a).value();  // the moved-from handle owns nothing
    EXPECT_EQ(moved.name(), first);
  }
  EXPECT_TRUE(ourNames().empty());
  EXPECT_EQ(SharedHostSegment::open(first, 1).status().code(), ErrorCode::kUnavailable);
}

// A segment larger than /dev/shm's free space is refused before any page is touched (a tmpfs would
// otherwise create it and kill the process with SIGBUS on first use), naming both sizes and the fix.
TEST(SharedHostSegment, MoreThanSharedMemoryHoldsIsRefusedNamingTheSizes) {
  struct statvfs info {};
  ASSERT_EQ(::statvfs("/dev/shm", &info), 0) << "this test needs /dev/shm";
  const std::size_t free_bytes = static_cast<std::size_t>(info.f_bavail) * static_cast<std::size_t>(info.f_frsize);
  const std::size_t wanted = free_bytes + (std::size_t{64} << 20);
  auto refused = SharedHostSegment::create(wanted);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), ErrorCode::kOutOfMemory) << refused.status().toString();
  for (const char* part : {"/dev/shm", "free", "--shm-size", "PEERREDUCE_POOL_BYTES", "/peerreduce-"}) {
    EXPECT_TRUE(mentions(refused.status(), part)) << part << ": " << refused.status().toString();
  }
  EXPECT_TRUE(mentions(refused.status(), std::to_string((wanted + (1u << 20) - 1) >> 20) + " MiB"))
      << refused.status().toString();
  EXPECT_TRUE(ourNames().empty()) << "the refused segment's name was removed";
  // What fits is taken at once: its pages are there to touch.
  auto fits = SharedHostSegment::create(std::size_t{1} << 20);
  ASSERT_TRUE(fits.isOk()) << fits.status().toString();
  static_cast<volatile char*>(fits->data())[(std::size_t{1} << 20) - 1] = 1;
}

TEST(SharedHostSegment, BadRequestsAreTypedErrorsAndLeaveNoName) {
  auto empty = SharedHostSegment::create(0);
  ASSERT_FALSE(empty.isOk());
  EXPECT_EQ(empty.status().code(), ErrorCode::kInvalidArgument);
  // Too large to size or map: the name create() made is removed again.
  auto huge = SharedHostSegment::create(std::size_t{1} << 62);
  ASSERT_FALSE(huge.isOk());
  EXPECT_EQ(huge.status().code(), ErrorCode::kOutOfMemory) << huge.status().toString();
  EXPECT_TRUE(mentions(huge.status(), "/peerreduce-")) << huge.status().toString();
  EXPECT_TRUE(ourNames().empty());

  for (const char* bad :
       {"", "/", "/tmp/x", "/peerreduce-", "/peerreduce-1/../x", "peerreduce-1-2-3", "/peerreduce-1-2-XYZ"}) {
    auto opened = SharedHostSegment::open(bad, 4096);
    ASSERT_FALSE(opened.isOk()) << bad;
    EXPECT_EQ(opened.status().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_TRUE(mentions(opened.status(), "not one peerreduce makes")) << opened.status().toString();
  }
  auto owner = SharedHostSegment::create(4096);
  ASSERT_TRUE(owner.isOk());
  auto bigger = SharedHostSegment::open(owner->name(), 8192);
  ASSERT_FALSE(bigger.isOk());
  EXPECT_EQ(bigger.status().code(), ErrorCode::kMismatch);
  EXPECT_TRUE(mentions(bigger.status(), "holds 4096 bytes, the peer record promised 8192"))
      << bigger.status().toString();
  EXPECT_EQ(SharedHostSegment::open(owner->name(), 0).status().code(), ErrorCode::kInvalidArgument);
}

// --- SharedHostAllocator: the pinned pool's blocks as shareable segments ---

struct RegistrationLog {
  int locks = 0;
  int unlocks = 0;
  bool refuse = false;
};

std::shared_ptr<SharedHostAllocator> allocatorLogging(RegistrationLog& log) {
  return std::make_shared<SharedHostAllocator>(
      SharedHostAllocator::Registration{"a test registration",
                                        [&log](void*, std::size_t) {
                                          ++log.locks;
                                          return log.refuse ? unavailableError("registration refused") : Status::ok();
                                        },
                                        [&log](void*, std::size_t) { ++log.unlocks; }});
}

PinnedHostPool poolOver(std::shared_ptr<HostAllocator> allocator) {
  return PinnedHostPool::create(PinnedHostPoolOptions{.limit_bytes = std::size_t{1} << 20}, std::move(allocator))
      .value();
}

TEST(SharedHostAllocator, PoolBlocksAreSharedByNameUntilSharingEndsThenRetired) {
  RegistrationLog log;
  auto allocator = allocatorLogging(log);
  PinnedHostPool pool = poolOver(allocator);
  {
    auto block = pool.acquire(100000);
    ASSERT_TRUE(block.isOk()) << block.status().toString();
    EXPECT_TRUE(block->locked());
    EXPECT_EQ(log.locks, 1);
    const std::string name = block->sharedName();
    ASSERT_FALSE(name.empty());
    auto peer = SharedHostSegment::open(name, block->capacity());
    ASSERT_TRUE(peer.isOk()) << peer.status().toString();
    std::memcpy(peer->data(), "from the peer", 14);
    EXPECT_STREQ(static_cast<const char*>(block->data()), "from the peer");
    ASSERT_TRUE(block->endSharing().isOk());
    EXPECT_TRUE(block->sharedName().empty());
    EXPECT_TRUE(ourNames().empty());
  }
  // Its name is gone, so it is freed on return instead of kept for a region no peer could map.
  const PinnedStats stats = pool.stats();
  EXPECT_EQ(stats.blocks_retired, 1u);
  EXPECT_EQ(stats.bytes_pinned, 0u);
  EXPECT_EQ(stats.blocks_idle, 0u);
  EXPECT_EQ(allocator->segments(), 0u);
  EXPECT_EQ(log.unlocks, 1);
}

TEST(SharedHostAllocator, BlocksStillSharedAreReusedAndFreedWithThePool) {
  RegistrationLog log;
  auto allocator = allocatorLogging(log);
  {
    PinnedHostPool pool = poolOver(allocator);
    std::string name;
    {
      auto block = pool.acquire(4096);
      ASSERT_TRUE(block.isOk());
      name = block->sharedName();
    }
    auto again = pool.acquire(4000);
    ASSERT_TRUE(again.isOk());
    EXPECT_EQ(again->sharedName(), name);
    EXPECT_EQ(pool.stats().reuses, 1u);
    EXPECT_EQ(ourNames().size(), 1u);
  }
  EXPECT_EQ(allocator->segments(), 0u);  // the pool's end freed it, and its name with it
  EXPECT_TRUE(ourNames().empty());
  EXPECT_EQ(log.locks, log.unlocks);
}

TEST(SharedHostAllocator, ARefusedRegistrationLeavesTheBlockUnlockedAndAStrictAlignmentIsRefused) {
  RegistrationLog log;
  log.refuse = true;
  auto allocator = allocatorLogging(log);
  PinnedHostPool pool = poolOver(allocator);
  auto block = pool.acquire(4096);
  ASSERT_TRUE(block.isOk());
  EXPECT_FALSE(block->locked());  // the GPU transport refuses such a block for a host-staged region
  EXPECT_EQ(pool.stats().lock_failures, 1u);
  block->reset();
  EXPECT_EQ(log.unlocks, 0);  // never registered, never unregistered

  auto strict = allocator->allocate(4096, std::size_t{1} << 20);
  ASSERT_FALSE(strict.isOk());
  EXPECT_EQ(strict.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(allocator->endSharing(&log).code() == ErrorCode::kInternal);
  EXPECT_TRUE(allocator->sharedName(&log).empty());
}

TEST(PinnedHostPool, StagedTrafficIsCountedInTheStatistics) {
  PinnedHostPool pool = poolOver(nullptr);
  pool.recordStaged(4096);
  pool.recordStaged(100);
  PinnedStats stats = pool.stats();
  EXPECT_EQ(stats.bytes_staged, 4196u);
  EXPECT_EQ(stats.staged_operations, 2u);
  EXPECT_EQ(stats.bytes_pinned, 0u);  // counting traffic pins nothing
  // A resident region (a GPU rank's host-placed memory) is not traffic; a staging block is its bytes.
  auto region = pool.acquire(8192, PinnedUse::kResident);
  ASSERT_TRUE(region.isOk());
  auto transfer = pool.acquire(1000);
  ASSERT_TRUE(transfer.isOk());
  stats = pool.stats();
  EXPECT_EQ(stats.bytes_staged, 5196u);
  EXPECT_EQ(stats.staged_operations, 2u);
  EXPECT_EQ(stats.blocks_in_use, 2u);
}

}  // namespace
}  // namespace peerreduce::testing
