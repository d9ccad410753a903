// InProcessBootstrap (peerreduce/bootstrap.h): gathers in rank order, agrees on mismatched lengths,
// and never hangs: a rank that does not come makes the others time out naming it, and the group
// stays broken afterwards.
#include "peerreduce/bootstrap.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "on_every_rank.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

using std::chrono::milliseconds;

// Long enough for sanitizer-slowed threads to meet; the tests that expect a timeout use a short one.
constexpr milliseconds kBootstrapGenerous{20000};
constexpr milliseconds kShort{100};

std::vector<std::shared_ptr<Bootstrap>> makeGroup(int size) {
  auto group = createInProcessGroup(size);
  EXPECT_TRUE(group.isOk()) << group.status().toString();
  return group.isOk() ? std::move(group).value() : std::vector<std::shared_ptr<Bootstrap>>{};
}

using testing::onEveryRank;

using peerreduce::testing::contains;

TEST(InProcessGroup, SizesOutsideOneTo64AreRejected) {
  for (int size : {0, -1, 65}) {
    auto group = createInProcessGroup(size);
    ASSERT_FALSE(group.isOk()) << size;
    EXPECT_EQ(group.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(group.status().message(), std::to_string(size) + " ranks; supported sizes are 1..64"))
        << group.status().message();
  }
}

TEST(InProcessGroup, EachBootstrapKnowsItsRankAndSize) {
  auto group = makeGroup(5);
  ASSERT_EQ(group.size(), 5u);
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(group[static_cast<std::size_t>(r)]->rank(), r);
    EXPECT_EQ(group[static_cast<std::size_t>(r)]->size(), 5);
  }
}

// Several rounds back to back: a fast rank must never read a round's result that a later round
// overwrote, and blocks land in rank order.
TEST(InProcessBootstrap, AllGatherPutsBlockRInSlotRForManyRounds) {
  constexpr int kSize = 4;
  constexpr int kRounds = 20;
  auto group = makeGroup(kSize);
  ASSERT_EQ(group.size(), static_cast<std::size_t>(kSize));
  auto results = onEveryRank(kSize, [&](int r) -> Status {
    for (int round = 0; round < kRounds; ++round) {
      const std::byte mine[2] = {static_cast<std::byte>(r), static_cast<std::byte>(round)};
      std::vector<std::byte> all(2 * kSize);
      PR_RETURN_IF_ERROR(group[static_cast<std::size_t>(r)]->allGather(mine, all, kBootstrapGenerous));
      for (int q = 0; q < kSize; ++q) {
        if (all[2 * static_cast<std::size_t>(q)] != static_cast<std::byte>(q) ||
            all[2 * static_cast<std::size_t>(q) + 1] != static_cast<std::byte>(round)) {
          return internalError("rank " + std::to_string(r) + " round " + std::to_string(round) + ": wrong block " +
                               std::to_string(q));
        }
      }
    }
    return group[static_cast<std::size_t>(r)]->barrier(kBootstrapGenerous);
  });
  for (int r = 0; r < kSize; ++r) EXPECT_TRUE(results[static_cast<std::size_t>(r)].isOk()) << results[r].toString();
}

TEST(InProcessBootstrap, SingleRankGathersItsOwnBlockAtOnce) {
  auto group = makeGroup(1);
  ASSERT_EQ(group.size(), 1u);
  const std::byte mine[3] = {std::byte{1}, std::byte{2}, std::byte{3}};
  std::vector<std::byte> all(3);
  ASSERT_TRUE(group[0]->allGather(mine, all, kShort).isOk());
  EXPECT_EQ(all, std::vector<std::byte>(mine, mine + 3));
  EXPECT_TRUE(group[0]->barrier(kShort).isOk());
}

TEST(InProcessBootstrap, DifferentBlockLengthsFailOnEveryRankWithMismatch) {
  constexpr int kSize = 3;
  auto group = makeGroup(kSize);
  ASSERT_EQ(group.size(), static_cast<std::size_t>(kSize));
  auto results = onEveryRank(kSize, [&](int r) {
    std::vector<std::byte> mine(r == 2 ? 5 : 4, std::byte{7});
    std::vector<std::byte> all(4 * kSize, std::byte{0});
    const Status s = group[static_cast<std::size_t>(r)]->allGather(mine, all, kBootstrapGenerous);
    // The output must not be filled on failure.
    if (all != std::vector<std::byte>(4 * kSize, std::byte{0})) return internalError("output written");
    return s;
  });
  for (const Status& s : results) {
    EXPECT_EQ(s.code(), ErrorCode::kMismatch) << s.toString();
    EXPECT_TRUE(contains(s.message(), "rank 0 sent 4 bytes but rank 2 sent 5")) << s.message();
  }
}

TEST(InProcessBootstrap, OutputOfTheWrongSizeIsRejectedWithoutWriting) {
  constexpr int kSize = 2;
  auto group = makeGroup(kSize);
  ASSERT_EQ(group.size(), static_cast<std::size_t>(kSize));
  auto results = onEveryRank(kSize, [&](int r) {
    const std::byte mine[4] = {};
    std::vector<std::byte> all(r == 1 ? 7 : 8, std::byte{9});  // rank 1 passes one byte too few
    const Status s = group[static_cast<std::size_t>(r)]->allGather(mine, all, kBootstrapGenerous);
    if (r == 1 && all != std::vector<std::byte>(7, std::byte{9})) return internalError("short output written");
    return s;
  });
  EXPECT_TRUE(results[0].isOk()) << results[0].toString();
  EXPECT_EQ(results[1].code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(results[1].message(), "output holds 7 bytes, 8 needed")) << results[1].message();
}

// Rank 2 of 3 never calls: ranks 0 and 1 return kTimeout naming rank 2 instead of waiting forever,
// and every later call on the group fails at once with the same error.
TEST(InProcessBootstrap, MissingRankMakesTheOthersTimeOutNamingItAndBreaksTheGroup) {
  constexpr int kSize = 3;
  auto group = makeGroup(kSize);
  ASSERT_EQ(group.size(), static_cast<std::size_t>(kSize));
  auto results = onEveryRank(2, [&](int r) { return group[static_cast<std::size_t>(r)]->barrier(kShort); });
  for (const Status& s : results) {
    EXPECT_EQ(s.code(), ErrorCode::kTimeout) << s.toString();
    // Rank 2 is always named; rank 1 too if it came later than rank 0's deadline on a loaded machine.
    EXPECT_TRUE(contains(s.message(), "2 to join a collective")) << s.message();
    EXPECT_TRUE(contains(s.message(), "create a new one")) << s.message();
  }
  // Late arrivals (and retries) fail promptly rather than waiting for a round that cannot complete.
  const auto start = std::chrono::steady_clock::now();
  const Status late = group[2]->barrier(kBootstrapGenerous);
  EXPECT_EQ(late.code(), ErrorCode::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, kBootstrapGenerous / 2);
  EXPECT_EQ(group[0]->barrier(kBootstrapGenerous).code(), ErrorCode::kTimeout);
}

// A rank that was already waiting when another rank broke the group is woken with the error.
TEST(InProcessBootstrap, WaitingRankIsWokenWhenAnotherRankBreaksTheGroup) {
  constexpr int kSize = 3;
  auto group = makeGroup(kSize);
  ASSERT_EQ(group.size(), static_cast<std::size_t>(kSize));
  Status patient;
  std::thread waiter([&] { patient = group[0]->barrier(kBootstrapGenerous); });
  // Rank 1 waits briefly and gives up; rank 0, waiting with a long timeout, must return now too.
  const auto start = std::chrono::steady_clock::now();
  const Status impatient = group[1]->barrier(milliseconds(300));
  waiter.join();
  EXPECT_EQ(impatient.code(), ErrorCode::kTimeout);
  EXPECT_EQ(patient.code(), ErrorCode::kTimeout) << patient.toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, kBootstrapGenerous / 2);
}

}  // namespace
}  // namespace peerreduce
