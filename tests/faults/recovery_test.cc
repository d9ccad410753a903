// Recovery: failure agreement, shrink planning, the communicator-level API over a bootstrap, and a
// link that dies in the middle of an operation on a partial topology, after which the survivors
// re-plan around it.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "faulty_world.h"
#include "topology/generators.h"

namespace peerreduce::testing {
namespace {

using faults::Fault;
using faults::FaultKind;

std::vector<std::vector<std::int32_t>> inputsFor(int n, std::size_t count, int salt) {
  std::vector<std::vector<std::int32_t>> in(static_cast<std::size_t>(n), std::vector<std::int32_t>(count));
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < count; ++i)
      in[static_cast<std::size_t>(r)][i] = (r + 1) * 1000 + static_cast<int>(i % 97) + salt;
  }
  return in;
}

std::vector<std::int32_t> sumOf(const std::vector<std::vector<std::int32_t>>& in) {
  std::vector<std::int32_t> out(in[0].size(), 0);
  for (const auto& v : in) {
    for (std::size_t i = 0; i < v.size(); ++i) out[i] += v[i];
  }
  return out;
}

std::vector<FailureDecision> mustAgree(FaultyWorld& w) {
  std::vector<FailureDecision> out;
  for (auto& d : w.abortAndAgree()) {
    EXPECT_TRUE(d.isOk()) << d.status().toString();
    if (d.isOk()) out.push_back(*d);
  }
  return out;
}

// --- agreement on reports (no bootstrap) ---

TEST(FailureAgreement, ReportsNamingRanksOutsideTheWorldOrTwiceAreRejected) {
  const Topology t = Topology::fullMesh(3);
  auto twice = agreeOnFailures(t, {FailureReport{0, {}, {}}, FailureReport{0, {}, {}}});
  EXPECT_EQ(twice.status().code(), ErrorCode::kInvalidArgument);
  auto outside = agreeOnFailures(t, {FailureReport{0, {7}, {}}});
  EXPECT_EQ(outside.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(outside.status().message().find("rank 7"), std::string::npos);
  auto bad_link = agreeOnFailures(t, {FailureReport{0, {}, {{0, 0}}}});
  EXPECT_EQ(bad_link.status().code(), ErrorCode::kInvalidArgument);
}

TEST(FailureAgreement, ACrashedMiddleOfALineSplitsTheSurvivorsIntoTwoGroups) {
  Topology line(3);
  line.setBidirectional(0, 1, Topology::defaultNvLink());
  line.setBidirectional(1, 2, Topology::defaultNvLink());
  // Rank 1 crashed: it sends nothing; 0 and 2 each lost it and cannot reach one another.
  auto decided = agreeOnFailures(line, {FailureReport{0, {1}, {}}, FailureReport{2, {1}, {}}});
  ASSERT_TRUE(decided.isOk()) << decided.status().toString();
  EXPECT_EQ((*decided)[0].survivors, std::vector<int>{0});
  EXPECT_EQ((*decided)[1].survivors, std::vector<int>{2});
  EXPECT_TRUE(decisionsAgree(*decided, 0));
  EXPECT_TRUE(decisionsAgree(*decided, 2));
  EXPECT_FALSE(decisionsAgree(*decided, 1));  // rank 1 made no decision
}

TEST(FailureAgreement, TheLargestGroupGoesOnAndTiesGoToTheLowestRank) {
  FailureDecision lost{0, {1, 2}, {0}, {}, 0};  // rank 0 failed: its decision lacks it
  FailureDecision a{1, {1, 2}, {0, 3, 4}, {}, 0};
  FailureDecision b{3, {3, 4}, {0, 1, 2}, {}, 0};
  FailureDecision c{5, {5, 6, 7}, {0, 1, 2, 3, 4}, {}, 0};
  const std::vector<FailureDecision> tie{lost, a, b};
  ASSERT_NE(largestGroup(tie), nullptr);
  EXPECT_EQ(largestGroup(tie)->rank, 1);  // equal sizes: the first, holding the lowest rank
  const std::vector<FailureDecision> bigger{lost, a, b, c};
  EXPECT_EQ(largestGroup(bigger)->rank, 5);
  EXPECT_EQ(largestGroup({lost}), nullptr);  // nobody keeps its own rank
  EXPECT_EQ(largestGroup({}), nullptr);
}

TEST(FailureAgreement, DeadLinksAreAgreedAndRemovedByTheShrink) {
  const Topology t = Topology::fullMesh(4);
  auto decided = agreeOnFailures(t, {FailureReport{0, {}, {{0, 2}}}, FailureReport{1, {}, {}},
                                     FailureReport{2, {}, {{2, 0}}}, FailureReport{3, {}, {}}});
  ASSERT_TRUE(decided.isOk());
  for (const auto& d : *decided) {
    EXPECT_EQ(d.survivors, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(d.dead_links, (std::vector<std::pair<int, int>>{{0, 2}}));
  }
  auto plan = planShrink(t, (*decided)[1]);
  ASSERT_TRUE(plan.isOk());
  EXPECT_FALSE(plan->topology.link(0, 2).connected());
  EXPECT_FALSE(plan->topology.link(2, 0).connected());
  EXPECT_TRUE(plan->topology.link(0, 1).connected());
  EXPECT_NE(plan->describe().find("0->0"), std::string::npos);
}

TEST(ShrinkPlan, SurvivorsThatCannotReachOneAnotherAreRefusedByName) {
  Topology t(3);
  t.setBidirectional(0, 1, Topology::defaultNvLink());
  t.setLink(1, 2, Topology::defaultNvLink());  // one way only: 2 cannot answer
  FailureDecision d;
  d.rank = 0;
  d.survivors = {0, 1, 2};
  auto plan = planShrink(t, d);
  EXPECT_EQ(plan.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(plan.status().message().find("survivors 2"), std::string::npos) << plan.status().toString();
  FailureDecision none;
  none.rank = 1;
  EXPECT_EQ(planShrink(t, none).status().code(), ErrorCode::kInvalidArgument);
}

// --- agreement over a bootstrap ---

TEST(BootstrapAgreement, EveryRankDecidesTheSameAndACrashedRankLearnsItIsOut) {
  auto world = FaultyWorld::create(Topology::fullMesh(4));
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  FaultyWorld& w = **world;
  ASSERT_TRUE(w.faults().inject(Fault{FaultKind::kCrash, 2, -1, 0, 0, 0.0}).isOk());
  auto out = w.allreduce(inputsFor(4, 1000, 0));
  for (int r = 0; r < 4; ++r) EXPECT_FALSE(out.status[static_cast<std::size_t>(r)].isOk()) << "rank " << r;
  const std::vector<FailureDecision> decisions = mustAgree(w);
  ASSERT_EQ(decisions.size(), 4u);
  for (const auto& d : decisions) {
    EXPECT_EQ(d.survivors, (std::vector<int>{0, 1, 3})) << "rank " << d.rank;
    EXPECT_EQ(d.failed, std::vector<int>{2});
  }
  auto refused = shrinkCommunicator(w.comm(2), decisions[2], nullptr, nullptr);
  EXPECT_EQ(refused.status().code(), ErrorCode::kPeerLost);
  EXPECT_NE(refused.status().message().find("declared failed"), std::string::npos);
}

TEST(BootstrapAgreement, BadReportsAreRejectedNamingTheProblem) {
  auto group = createInProcessGroup(1);
  ASSERT_TRUE(group.isOk());
  Bootstrap& b = *(*group)[0];
  const Topology one = Topology::fullMesh(1);
  EXPECT_EQ(
      agreeOnFailures(b, Topology::fullMesh(2), FailureReport{0, {}, {}}, std::chrono::seconds(1)).status().code(),
      ErrorCode::kInvalidArgument);
  auto other = agreeOnFailures(b, one, FailureReport{3, {}, {}}, std::chrono::seconds(1));
  EXPECT_EQ(other.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(other.status().message().find("rank 3"), std::string::npos);
  EXPECT_EQ(agreeOnFailures(b, one, FailureReport{0, {5}, {}}, std::chrono::seconds(1)).status().code(),
            ErrorCode::kInvalidArgument);
  auto far_link = agreeOnFailures(b, one, FailureReport{0, {}, {{1, 2}}}, std::chrono::seconds(1));
  EXPECT_EQ(far_link.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(far_link.status().message().find("own end"), std::string::npos);
  // A world of one with nothing lost: it survives alone.
  auto alone = agreeOnFailures(b, one, FailureReport{0, {}, {}}, std::chrono::seconds(1));
  ASSERT_TRUE(alone.isOk());
  EXPECT_EQ(alone->survivors, std::vector<int>{0});
}

TEST(BootstrapAgreement, ARankThatNeverArrivesIsATimeoutNamingIt) {
  auto group = createInProcessGroup(2);
  ASSERT_TRUE(group.isOk());
  auto decided =
      agreeOnFailures(*(*group)[0], Topology::fullMesh(2), FailureReport{0, {}, {}}, std::chrono::milliseconds(50));
  EXPECT_EQ(decided.status().code(), ErrorCode::kTimeout);
  EXPECT_NE(decided.status().message().find("ranks 1"), std::string::npos) << decided.status().toString();
}

TEST(ShrinkCommunicator, RefusesAnotherRanksDecisionAndAMissingBootstrap) {
  auto world = FaultyWorld::create(Topology::fullMesh(2));
  ASSERT_TRUE(world.isOk());
  FaultyWorld& w = **world;
  FailureDecision d;
  d.rank = 1;
  d.survivors = {0, 1};
  EXPECT_EQ(shrinkCommunicator(w.comm(0), d, nullptr, nullptr).status().code(), ErrorCode::kInvalidArgument);
  d.rank = 0;
  auto missing = shrinkCommunicator(w.comm(0), d, nullptr, nullptr);
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("null"), std::string::npos);
}

TEST(FailureReport, NamesLostPeersDeadLinksAndItself) {
  auto world = FaultyWorld::create(Topology::fullMesh(3));
  ASSERT_TRUE(world.isOk());
  FaultyWorld& w = **world;
  EXPECT_TRUE(w.comm(0).failureReport().lost_ranks.empty());
  ASSERT_TRUE(w.faults().inject(Fault{FaultKind::kLinkDown, 0, 1, 0, 0, 0.0}).isOk());
  ASSERT_TRUE(w.faults().inject(Fault{FaultKind::kStallForever, 2, -1, 0, 0, 0.0}).isOk());
  const FailureReport r0 = w.comm(0).failureReport();
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r0.lost_ranks, std::vector<int>{2});
  EXPECT_EQ(r0.dead_links, (std::vector<std::pair<int, int>>{{0, 1}}));
  EXPECT_EQ(w.comm(2).failureReport().lost_ranks, std::vector<int>{2});  // it knows it stopped
}

// --- a link dies mid-operation on a partial topology; the survivors re-plan around it ---

TEST(LinkDiesMidOperation, SurvivorsAgreeAndTheShrunkWorldRoutesAroundTheDeadLink) {
  // Six ranks: a ring 0-1-2-3-4-5-0 plus the chords 0-3 and 1-4. Ring plans ride the cycle; when 2-3
  // dies, the only Hamiltonian cycle left is 0-1-2-... no: the re-plan must avoid 2-3 whatever it is.
  Topology t = ringTopology(6);
  t.setBidirectional(0, 3, Topology::defaultNvLink());
  t.setBidirectional(1, 4, Topology::defaultNvLink());
  t.setBidirectional(2, 5, Topology::defaultNvLink());
  Config config = FaultyWorld::smallConfig();
  config.algorithm = Algorithm::kRing;
  auto world = FaultyWorld::create(t, config);
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  FaultyWorld& w = **world;
  auto selection = w.comm(0).explainSelection(60000, DataType::kInt32);
  ASSERT_TRUE(selection.isOk());
  ASSERT_NE(selection->plan.find("2-3"), std::string::npos)
      << "the ring should cross 2-3 at first: " << selection->plan;

  // A healthy operation first, then the link 2<->3 dies five actions into the next one.
  const auto healthy_in = inputsFor(6, 60000, 1);
  auto healthy = w.allreduce(healthy_in);
  for (int r = 0; r < 6; ++r) {
    ASSERT_TRUE(healthy.status[static_cast<std::size_t>(r)].isOk())
        << healthy.status[static_cast<std::size_t>(r)].toString();
    EXPECT_EQ(healthy.result[static_cast<std::size_t>(r)], sumOf(healthy_in));
  }
  auto hit = w.allreduce(inputsFor(6, 60000, 2), {Fault{FaultKind::kLinkDown, 2, 3, 0, 5, 0.0}});
  int link_down = 0;
  for (int r = 0; r < 6; ++r) {
    const Status& s = hit.status[static_cast<std::size_t>(r)];
    ASSERT_FALSE(s.isOk()) << "rank " << r << " reported success across a dead link";
    EXPECT_TRUE(s.code() == ErrorCode::kLinkDown || s.code() == ErrorCode::kTimeout) << s.toString();
    EXPECT_NE(s.message().find("rank"), std::string::npos);
    if (s.code() == ErrorCode::kLinkDown) {
      ++link_down;
      EXPECT_TRUE(s.message().find("2->3") != std::string::npos || s.message().find("3->2") != std::string::npos)
          << s.toString();
    }
  }
  EXPECT_GE(link_down, 1);

  const std::vector<FailureDecision> decisions = mustAgree(w);
  ASSERT_EQ(decisions.size(), 6u);
  for (const auto& d : decisions) {
    EXPECT_EQ(d.survivors, (std::vector<int>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(d.dead_links, (std::vector<std::pair<int, int>>{{2, 3}}));
  }
  auto shrunk = w.shrink(decisions);
  ASSERT_TRUE(shrunk.isOk()) << shrunk.status().toString();
  FaultyWorld& s = **shrunk;
  ASSERT_EQ(s.size(), 6);
  EXPECT_FALSE(s.comm(0).topology().link(2, 3).connected());
  auto replanned = s.comm(0).explainSelection(60000, DataType::kInt32);
  ASSERT_TRUE(replanned.isOk());
  EXPECT_EQ(replanned->plan.find("2-3"), std::string::npos) << replanned->plan;
  EXPECT_EQ(replanned->plan.find("3-2"), std::string::npos) << replanned->plan;
  const auto after_in = inputsFor(6, 60000, 3);
  auto after = s.allreduce(after_in);
  for (int r = 0; r < 6; ++r) {
    ASSERT_TRUE(after.status[static_cast<std::size_t>(r)].isOk())
        << after.status[static_cast<std::size_t>(r)].toString();
    EXPECT_EQ(after.result[static_cast<std::size_t>(r)], sumOf(after_in)) << "rank " << r;
  }
}

TEST(LinkDiesMidOperation, ALinkWhoseLossDisconnectsARankLeavesTheLargestGroup) {
  // A ring of five: when 0-1 and 1-2 both die mid-operation, rank 1 is cut off; 0,2,3,4 go on as a
  // line (a relay tree), and rank 1 alone forms the smaller group.
  auto world = FaultyWorld::create(ringTopology(5));
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  FaultyWorld& w = **world;
  auto hit = w.allreduce(inputsFor(5, 5000, 4),
                         {Fault{FaultKind::kLinkDown, 0, 1, 0, 3, 0.0}, Fault{FaultKind::kLinkDown, 1, 2, 0, 3, 0.0}});
  for (int r = 0; r < 5; ++r) EXPECT_FALSE(hit.status[static_cast<std::size_t>(r)].isOk()) << "rank " << r;
  const std::vector<FailureDecision> decisions = mustAgree(w);
  ASSERT_EQ(decisions.size(), 5u);
  EXPECT_EQ(decisions[1].survivors, std::vector<int>{1});
  for (int r : {0, 2, 3, 4})
    EXPECT_EQ(decisions[static_cast<std::size_t>(r)].survivors, (std::vector<int>{0, 2, 3, 4}));
  auto shrunk = w.shrink(decisions);
  ASSERT_TRUE(shrunk.isOk()) << shrunk.status().toString();
  FaultyWorld& s = **shrunk;
  ASSERT_EQ(s.size(), 4);
  auto replanned = s.comm(0).explainSelection(5000, DataType::kInt32);
  ASSERT_TRUE(replanned.isOk());
  EXPECT_NE(replanned->plan.find("tree"), std::string::npos) << replanned->plan;
  const auto in = inputsFor(4, 5000, 5);
  auto after = s.allreduce(in);
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(after.status[static_cast<std::size_t>(r)].isOk())
        << after.status[static_cast<std::size_t>(r)].toString();
    EXPECT_EQ(after.result[static_cast<std::size_t>(r)], sumOf(in));
  }
}

}  // namespace
}  // namespace peerreduce::testing
