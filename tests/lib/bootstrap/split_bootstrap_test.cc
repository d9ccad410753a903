// SplitRounds and SplitBootstrap (bootstrap/split_bootstrap.h): children carried over one parent bootstrap
// gather their own ranks' blocks whatever the other children do, every parent rank returns once all have
// finished, and a member that left, disagreeing lengths or a rank calling another collective are typed
// errors rather than hangs. After the split a child's bootstrap forwards to its own or refuses.
#include "bootstrap/split_bootstrap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "on_every_rank.h"

namespace peerreduce {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kSplitBootstrapGenerous{20000};  // sanitizer-slowed threads still meet well within it

using testing::onEveryRank;

// `collectives` all-gathers of `bytes` bytes each (byte value: 10 x parent rank + collective), checking
// that every block came from the right member; then finish().
Status runChild(SplitRounds& rounds, SplitBootstrap& child, const std::vector<int>& members, int collectives,
                std::size_t bytes) {
  for (int c = 0; c < collectives; ++c) {
    const auto mark = [&](int parent_rank) { return static_cast<std::byte>(10 * parent_rank + c); };
    std::vector<std::byte> mine(bytes, mark(members[static_cast<std::size_t>(child.rank())]));
    std::vector<std::byte> all(bytes * members.size());
    PR_RETURN_IF_ERROR(child.allGather(mine, all, kSplitBootstrapGenerous));
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (all[i] != mark(members[i / bytes])) return internalError("wrong byte at " + std::to_string(i));
    }
  }
  return rounds.finish(kSplitBootstrapGenerous);
}

TEST(SplitBootstrap, ChildrenOfDifferentLengthsAndANoColorRankAllFinish) {
  auto parent = createInProcessGroup(5).value();
  // Ranks 0 and 3 form child 0 (3 collectives of 8 bytes); 4, 1 child 1 (7 of 100 bytes); rank 2 none.
  const std::vector<std::vector<int>> members = {{0, 3}, {4, 1}};
  const auto results = onEveryRank(5, [&](int r) -> Status {
    const int color = r == 2 ? -1 : (r == 0 || r == 3 ? 0 : 1);
    auto rounds = std::make_shared<SplitRounds>(parent[static_cast<std::size_t>(r)], color);
    if (color < 0) return rounds->finish(kSplitBootstrapGenerous);
    const auto& mine = members[static_cast<std::size_t>(color)];
    SplitBootstrap child(rounds, mine, static_cast<int>(std::find(mine.begin(), mine.end(), r) - mine.begin()));
    return runChild(*rounds, child, mine, color == 0 ? 3 : 7, color == 0 ? 8 : 100);
  });
  for (const Status& s : results) EXPECT_TRUE(s.isOk()) << s.toString();
}

// Both ranks of a 2-rank parent form one child: rank r all-gathers bytes_of(r) bytes (nothing when 0), then
// finishes; each rank's first error.
std::vector<Status> pairChild(const std::function<std::size_t(int)>& bytes_of) {
  auto parent = createInProcessGroup(2).value();
  return onEveryRank(2, [&](int r) -> Status {
    auto rounds = std::make_shared<SplitRounds>(parent[static_cast<std::size_t>(r)], 0);
    SplitBootstrap child(rounds, {0, 1}, r);
    Status gathered = Status::ok();
    if (const std::size_t bytes = bytes_of(r); bytes > 0) {
      std::vector<std::byte> block(bytes), all(2 * bytes);
      gathered = child.allGather(block, all, kSplitBootstrapGenerous);
    }
    const Status finished = rounds->finish(kSplitBootstrapGenerous);
    return gathered.isOk() ? finished : gathered;
  });
}

TEST(SplitBootstrap, AMemberThatLeftFailsItsChildsNextCollectiveAtOnce) {
  const auto results = pairChild([](int r) -> std::size_t { return r == 0 ? 4 : 0; });
  EXPECT_TRUE(results[1].isOk()) << results[1].toString();
  EXPECT_EQ(results[0].code(), ErrorCode::kUnavailable) << results[0].toString();
  EXPECT_NE(results[0].message().find("child rank 1 (parent rank 1) left"), std::string::npos) << results[0].toString();
}

TEST(SplitBootstrap, DifferentLengthsInOneChildAreAMismatchOnEveryMember) {
  const auto results = pairChild([](int r) -> std::size_t { return static_cast<std::size_t>(4 + r); });
  for (const Status& s : results) EXPECT_EQ(s.code(), ErrorCode::kMismatch) << s.toString();
}

TEST(SplitBootstrap, ARankCallingAnotherCollectiveIsAMismatch) {
  auto parent = createInProcessGroup(2).value();
  const auto results = onEveryRank(2, [&](int r) -> Status {
    if (r == 1) {  // a parent collective of a header's size, but not a split round
      std::vector<std::byte> block(24), all(48);
      return parent[1]->allGather(block, all, kSplitBootstrapGenerous);
    }
    SplitRounds rounds(parent[0], -1);
    return rounds.finish(kSplitBootstrapGenerous);
  });
  EXPECT_EQ(results[0].code(), ErrorCode::kMismatch) << results[0].toString();
  EXPECT_NE(results[0].message().find("parent rank 1 sent a block that is not a split round"), std::string::npos)
      << results[0].toString();
}

TEST(SplitBootstrap, AfterTheSplitAChildForwardsToItsOwnBootstrapOrRefuses) {
  auto parent = createInProcessGroup(1).value();
  auto own = createInProcessGroup(1).value();
  auto rounds = std::make_shared<SplitRounds>(parent[0], 0);
  SplitBootstrap forwarded(rounds, {0}, 0);
  SplitBootstrap refused(rounds, {0}, 0);
  ASSERT_TRUE(rounds->finish(kSplitBootstrapGenerous).isOk());
  rounds->detach();
  forwarded.detach(own[0]);
  refused.detach(nullptr);
  std::vector<std::byte> block(4), all(4);
  EXPECT_TRUE(forwarded.allGather(block, all, kSplitBootstrapGenerous).isOk());
  const Status s = refused.allGather(block, all, kSplitBootstrapGenerous);
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported) << s.toString();
}

}  // namespace
}  // namespace peerreduce
