// The process-wide plan cache (algorithms/plan_cache.h): ranks of one process share one immutable plan per
// request; the verifier runs once per plan for every link matrix holding the pairs the plan uses, and once
// more only for a matrix that lacks one; both tables stay bounded.
#include "algorithms/plan_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
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

TEST(PlanCache, OnePlanIsVerifiedOnceForEveryMatrixHoldingThePairsItUses) {
  const PlanRequest request{Algorithm::kRing, 6, false};
  auto first = cachedPlan(request, fullLinks(6), true);
  ASSERT_TRUE(first.isOk());
  ASSERT_TRUE(first->report.ok());
  const auto& used = first->report.links_used;
  ASSERT_EQ(used.size(), 6u);
  // A ring reaches its neighbours only: some pair is unused, and a matrix without it needs no new run.
  auto spare = fullLinks(6);
  bool dropped = false;
  for (std::size_t a = 0; a < 6 && !dropped; ++a) {
    for (std::size_t b = 0; b < 6 && !dropped; ++b) {
      if (a != b && !used[a][b]) {
        spare[a][b] = false;
        dropped = true;
      }
    }
  }
  ASSERT_TRUE(dropped) << "a ring of 6 should leave some pair unused";
  const PlanCacheStats before = planCacheStats();
  auto without_spare = cachedPlan(request, spare, true);
  ASSERT_TRUE(without_spare.isOk());
  EXPECT_TRUE(without_spare->verified);
  EXPECT_TRUE(without_spare->report.ok());
  EXPECT_EQ(planCacheStats().verifier_runs, before.verifier_runs) << "the mesh verdict holds for these links";
  EXPECT_EQ(planCacheStats().link_verdicts, before.link_verdicts);

  // Without a pair it uses, the plan is verified against those links and refused, naming the link.
  auto missing = fullLinks(6);
  for (std::size_t b = 0; b < 6; ++b) {
    if (used[0][b]) {
      missing[0][b] = false;
      break;
    }
  }
  auto refused = cachedPlan(request, missing, true);
  ASSERT_TRUE(refused.isOk());
  ASSERT_FALSE(refused->report.ok());
  EXPECT_NE(refused->report.problems.front().find("no link"), std::string::npos) << refused->report.problems.front();
  EXPECT_EQ(planCacheStats().verifier_runs, before.verifier_runs + 1);
  EXPECT_EQ(planCacheStats().link_verdicts, before.link_verdicts + 1);
  // Asked again, with or without verification, that verdict is found, not recomputed.
  auto again = cachedPlan(request, missing, false);
  ASSERT_TRUE(again.isOk());
  EXPECT_TRUE(again->verified);
  EXPECT_FALSE(again->report.ok());
  EXPECT_EQ(planCacheStats().verifier_runs, before.verifier_runs + 1);
}

// More distinct plans than the limit (ring orders over 7 ranks): the plan table starts over instead of
// growing, and an evicted plan is rebuilt equal to the one before.
TEST(PlanCache, PlansStayBoundedAndEvictedOnesAreRebuilt) {
  std::vector<int> order(7);
  std::iota(order.begin(), order.end(), 0);
  const PlanRequest first_request{Algorithm::kRing, 7, false, order};
  auto original = cachedPlan(first_request, {}, false);
  ASSERT_TRUE(original.isOk());
  for (std::size_t i = 1; i <= kPlanCacheLimit; ++i) {
    ASSERT_TRUE(std::next_permutation(order.begin(), order.end()));
    ASSERT_TRUE(cachedPlan(PlanRequest{Algorithm::kRing, 7, false, order}, {}, false).isOk());
    ASSERT_LE(planCacheStats().plans, kPlanCacheLimit);
  }
  auto rebuilt = cachedPlan(first_request, {}, false);
  ASSERT_TRUE(rebuilt.isOk());
  EXPECT_NE(rebuilt->plan.get(), original->plan.get()) << "the first plan should have been evicted";
  EXPECT_EQ(rebuilt->plan->description, original->plan->description);
  EXPECT_EQ(rebuilt->plan->signal_counts, original->plan->signal_counts);
}

// More link matrices lacking a used pair than the limit: the verdict table starts over, and every answer
// still names a link its matrix lacks.
TEST(PlanCache, LinkVerdictsStayBoundedAndStayRight) {
  const PlanRequest request{Algorithm::kOneShot, 4, false};
  constexpr std::size_t kOffDiagonal = 12;
  std::size_t made = 0;
  for (std::size_t mask = 1; made <= kPlanCacheLimit && mask < (std::size_t{1} << kOffDiagonal); ++mask, ++made) {
    std::vector<std::vector<bool>> links = fullLinks(4);
    for (std::size_t bit = 0; bit < kOffDiagonal; ++bit) {
      if (mask & (std::size_t{1} << bit)) links[bit / 3][(bit / 3 + 1 + bit % 3) % 4] = false;
    }
    auto verdict = cachedPlan(request, links, true);
    ASSERT_TRUE(verdict.isOk());
    ASSERT_FALSE(verdict->report.ok()) << "one-shot reaches every pair; mask " << mask;
    ASSERT_NE(verdict->report.problems.front().find("no link"), std::string::npos);
    ASSERT_LE(planCacheStats().link_verdicts, kPlanCacheLimit);
  }
  EXPECT_GT(made, kPlanCacheLimit);
}

}  // namespace
}  // namespace peerreduce
