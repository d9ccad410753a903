// The process-wide plan cache (algorithms/plan_cache.h): ranks of one process share one immutable plan and
// one verdict per (algorithm, world size, placement, link matrix); the cache stays bounded.
#include "algorithms/plan_cache.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace peerreduce {
namespace {

std::vector<std::vector<bool>> fullLinks(int n) {
  return std::vector<std::vector<bool>>(static_cast<std::size_t>(n),
                                        std::vector<bool>(static_cast<std::size_t>(n), true));
}

TEST(PlanCache, EqualRequestsShareOnePlanAndVerifyOnce) {
  const PlanRequest request{Algorithm::kTwoShot, 5, false};
  auto unverified = cachedPlan(request, fullLinks(5), false);
  ASSERT_TRUE(unverified.isOk()) << unverified.status().toString();
  EXPECT_FALSE(unverified->verified);
  auto verified = cachedPlan(request, fullLinks(5), true);
  ASSERT_TRUE(verified.isOk());
  EXPECT_EQ(verified->plan.get(), unverified->plan.get()) << "the same request must share the plan";
  EXPECT_TRUE(verified->verified);
  EXPECT_TRUE(verified->report.ok());
  // Asked again without verification, the earlier verdict comes along.
  auto again = cachedPlan(request, fullLinks(5), false);
  ASSERT_TRUE(again.isOk());
  EXPECT_TRUE(again->verified);
  EXPECT_EQ(again->plan.get(), verified->plan.get());
}

TEST(PlanCache, PlacementAndLinksAreDistinctEntries) {
  auto out_of_place = cachedPlan(PlanRequest{Algorithm::kOneShot, 3, false}, fullLinks(3), true);
  auto in_place = cachedPlan(PlanRequest{Algorithm::kOneShot, 3, true}, fullLinks(3), true);
  ASSERT_TRUE(out_of_place.isOk() && in_place.isOk());
  EXPECT_NE(out_of_place->plan.get(), in_place->plan.get());
  EXPECT_TRUE(in_place->plan->in_place);

  // The verdict depends on the links: without 0->2 the one-shot plan is rejected, naming the peer.
  auto links = fullLinks(3);
  links[0][2] = false;
  auto partial = cachedPlan(PlanRequest{Algorithm::kOneShot, 3, false}, links, true);
  ASSERT_TRUE(partial.isOk());
  ASSERT_FALSE(partial->report.ok());
  const std::string& first = partial->report.problems.front();
  EXPECT_NE(first.find("rank 2"), std::string::npos) << first;
  EXPECT_NE(first.find("no link"), std::string::npos) << first;
  auto full_again = cachedPlan(PlanRequest{Algorithm::kOneShot, 3, false}, fullLinks(3), true);
  ASSERT_TRUE(full_again.isOk());
  EXPECT_TRUE(full_again->report.ok()) << "a verdict for other links must not leak into this one";
}

TEST(PlanCache, RequestsThatCannotBePlannedAreErrors) {
  auto automatic = cachedPlan(PlanRequest{Algorithm::kAuto, 2, false}, fullLinks(2), true);
  EXPECT_EQ(automatic.status().code(), ErrorCode::kInvalidArgument);
  auto too_big = cachedPlan(PlanRequest{Algorithm::kRing, 65, false}, {}, false);
  EXPECT_EQ(too_big.status().code(), ErrorCode::kInvalidArgument);
}

// More distinct entries than the limit: the cache starts over instead of growing, and answers stay
// right (an evicted plan is rebuilt, equal to the one before). Distinct link matrices make distinct
// entries of one small plan, so this costs little.
TEST(PlanCache, StaysBoundedAndRebuildsEvictedPlans) {
  const PlanRequest request{Algorithm::kOneShot, 4, false};
  auto original = cachedPlan(request, fullLinks(4), false);
  ASSERT_TRUE(original.isOk());
  for (std::size_t i = 1; i <= kPlanCacheLimit; ++i) {
    std::vector<std::vector<bool>> links = fullLinks(4);
    for (std::size_t bit = 0; bit < 12; ++bit) {
      if (i & (std::size_t{1} << bit)) links[bit / 3][(bit / 3 + 1 + bit % 3) % 4] = false;  // off-diagonal only
    }
    ASSERT_TRUE(cachedPlan(request, links, false).isOk());
  }
  auto rebuilt = cachedPlan(request, fullLinks(4), false);
  ASSERT_TRUE(rebuilt.isOk());
  EXPECT_NE(rebuilt->plan.get(), original->plan.get()) << "the first entry should have been evicted";
  EXPECT_EQ(rebuilt->plan->description, original->plan->description);
  EXPECT_EQ(rebuilt->plan->signal_counts, original->plan->signal_counts);
}

}  // namespace
}  // namespace peerreduce
