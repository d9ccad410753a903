// Which programs the fused GPU kernels take (lib/gpu/fused_shape.h), checked without a GPU: every
// rank of every one-shot and two-shot plan the builders make, in place or not, and nothing else.
#include "gpu/fused_shape.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "algorithms/algorithms.h"

namespace peerreduce::gpu {
namespace {

Plan mustBuild(Algorithm algorithm, int n, bool in_place) {
  PlanRequest request(algorithm, n, in_place);
  auto plan = buildPlan(request);
  EXPECT_TRUE(plan.isOk()) << plan.status().toString();
  return std::move(plan).value();
}

TEST(FusedShape, EveryRankOfEveryOneShotAndTwoShotPlanIsFused) {
  for (int n = 2; n <= 16; ++n) {
    for (bool in_place : {false, true}) {
      const Plan one = mustBuild(Algorithm::kOneShot, n, in_place);
      const Plan two = mustBuild(Algorithm::kTwoShot, n, in_place);
      for (int r = 0; r < n; ++r) {
        const FusedShape a = matchFusedShape(one, r);
        EXPECT_EQ(a.kind, FusedKind::kOneShot) << "one-shot n=" << n << " rank " << r;
        EXPECT_EQ(a.ready_flag, kFirstAlgorithmFlag);
        EXPECT_EQ(one.programs[static_cast<std::size_t>(r)].steps[a.ready_wait_step].kind, StepKind::kWait);
        const FusedShape b = matchFusedShape(two, r);
        EXPECT_EQ(b.kind, FusedKind::kTwoShot) << "two-shot n=" << n << " rank " << r;
        EXPECT_NE(b.ready_flag, b.result_flag);
        EXPECT_EQ(two.programs[static_cast<std::size_t>(r)].steps[b.result_wait_step].kind, StepKind::kWait);
        EXPECT_EQ(two.programs[static_cast<std::size_t>(r)].steps[b.result_wait_step].flag, b.result_flag);
      }
    }
  }
}

// A plan file (algorithm kUser) with a shipped shape's steps takes that shape's kernels, on every rank.
TEST(FusedShape, APlanFileWithAShippedShapeIsFusedOnEveryRank) {
  for (int n = 2; n <= 8; ++n) {
    for (const auto& [algorithm, kind] :
         {std::pair{Algorithm::kOneShot, FusedKind::kOneShot}, std::pair{Algorithm::kTwoShot, FusedKind::kTwoShot}}) {
      Plan plan = mustBuild(algorithm, n, false);
      plan.algorithm = Algorithm::kUser;
      for (int r = 0; r < n; ++r) EXPECT_EQ(matchFusedShape(plan, r).kind, kind) << algorithmName(algorithm) << n;
    }
    PlanRequest request(Algorithm::kOneShot, n, false);
    request.collective = Collective::kAllGather;
    Plan gather = buildPlan(request).value();
    gather.algorithm = Algorithm::kUser;
    for (int r = 0; r < n; ++r) EXPECT_EQ(matchFusedShape(gather, r).kind, FusedKind::kAllGatherDirect) << n;
  }
}

// A plan file whose ranks do not all have the shape runs in the interpreter on every rank, the ranks whose
// own program has it included: the kernels' protocols differ, so every rank must choose alike.
TEST(FusedShape, APlanFileWithTheShapeOnSomeRanksOnlyIsInterpretedEverywhere) {
  const int n = 4;
  Plan plan = mustBuild(Algorithm::kOneShot, n, false);
  plan.algorithm = Algorithm::kUser;
  // Rank 2 folds in another order (the verifier would refuse this plan; the shape check must not rely on it).
  RankProgram& two = plan.programs[2];
  for (const Step& step : two.steps) {
    if (step.kind == StepKind::kReduce) std::swap(two.sources[step.src_begin], two.sources[step.src_begin + 1]);
  }
  EXPECT_EQ(matchFusedShape(plan, 2).kind, FusedKind::kNone);
  for (int r : {0, 1, 3}) EXPECT_EQ(matchFusedShape(plan, r).kind, FusedKind::kNone) << "rank " << r;
}

TEST(FusedShape, OtherAlgorithmsAndSingleRankWorldsAreInterpreted) {
  for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kRecursiveDoubling, Algorithm::kRabenseifner}) {
    const Plan plan = mustBuild(algorithm, 4, false);
    for (int r = 0; r < 4; ++r) EXPECT_EQ(matchFusedShape(plan, r).kind, FusedKind::kNone) << algorithmName(algorithm);
  }
  EXPECT_EQ(matchFusedShape(mustBuild(Algorithm::kOneShot, 1, false), 0).kind, FusedKind::kNone);
  EXPECT_EQ(matchFusedShape(mustBuild(Algorithm::kOneShot, 4, false), 4).kind, FusedKind::kNone);  // no such rank
}

TEST(FusedShape, AnyChangeToTheProgramFallsBackToTheInterpreter) {
  const Plan base = mustBuild(Algorithm::kOneShot, 4, false);
  auto changed = [&](auto edit) {
    Plan p = base;
    edit(p.programs[1]);
    return matchFusedShape(p, 1).kind;
  };
  // Sources folded in another order.
  EXPECT_EQ(changed([](RankProgram& prog) {
              std::swap(prog.sources[prog.sources.size() - 1], prog.sources[prog.sources.size() - 2]);
            }),
            FusedKind::kNone);
  // A wait for two signals instead of one.
  EXPECT_EQ(changed([](RankProgram& prog) {
              for (Step& s : prog.steps) {
                if (s.kind == StepKind::kWait) {
                  s.value = 2;
                  break;
                }
              }
            }),
            FusedKind::kNone);
  // A missing signal.
  EXPECT_EQ(changed([](RankProgram& prog) {
              for (std::size_t i = 0; i < prog.steps.size(); ++i) {
                if (prog.steps[i].kind == StepKind::kSignal && prog.steps[i].flag != kDoneFlag) {
                  prog.steps.erase(prog.steps.begin() + static_cast<std::ptrdiff_t>(i));
                  break;
                }
              }
            }),
            FusedKind::kNone);
  // An extra step at the end.
  EXPECT_EQ(changed([](RankProgram& prog) { prog.steps.push_back(prog.steps.front()); }), FusedKind::kNone);
  // Not finalising (avg would not divide).
  EXPECT_EQ(changed([](RankProgram& prog) {
              for (Step& s : prog.steps) {
                if (s.kind == StepKind::kReduce) s.finalize = false;
              }
            }),
            FusedKind::kNone);
}

Plan mustBuildCollective(Collective collective, Algorithm algorithm, int n, bool in_place, int root = 0) {
  PlanRequest request(algorithm, n, in_place);
  request.collective = collective;
  request.root = root;
  auto plan = buildCollectivePlan(request);
  EXPECT_TRUE(plan.isOk()) << plan.status().toString();
  return std::move(plan).value();
}

// The first step of `rank` that is a wait for `peer`, or -1.
std::int64_t firstWaitFor(const Plan& plan, int rank, int peer) {
  const auto& steps = plan.programs[static_cast<std::size_t>(rank)].steps;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind == StepKind::kWait && steps[i].peer == peer) return static_cast<std::int64_t>(i);
  }
  return -1;
}

TEST(FusedShape, EveryRankOfEveryDirectCollectivePlanTakesItsCollectivesLines) {
  for (int n = 2; n <= 12; ++n) {
    for (bool in_place : {false, true}) {
      const Plan rs = mustBuildCollective(Collective::kReduceScatter, Algorithm::kOneShot, n, in_place);
      const Plan ag = mustBuildCollective(Collective::kAllGather, Algorithm::kOneShot, n, in_place);
      for (int r = 0; r < n; ++r) {
        const int first_peer = r == 0 ? 1 : 0;
        for (const auto& [plan, kind] :
             {std::pair{&rs, FusedKind::kReduceScatterDirect}, std::pair{&ag, FusedKind::kAllGatherDirect}}) {
          const FusedShape shape = matchFusedShape(*plan, r);
          EXPECT_EQ(shape.kind, kind) << collectiveName(plan->collective) << " n=" << n << " rank " << r;
          EXPECT_EQ(shape.ready_flag, kFirstAlgorithmFlag);
          EXPECT_EQ(static_cast<std::int64_t>(shape.ready_wait_step), firstWaitFor(*plan, r, first_peer))
              << "errors name the plan's wait for the first peer";
        }
      }
      for (int root = 0; root < n; ++root) {
        const Plan bc = mustBuildCollective(Collective::kBroadcast, Algorithm::kOneShot, n, in_place, root);
        for (int r = 0; r < n; ++r) {
          const FusedShape shape = matchFusedShape(bc, r);
          EXPECT_EQ(shape.kind, FusedKind::kBroadcastDirect) << "n=" << n << " root " << root << " rank " << r;
          EXPECT_EQ(shape.ready_flag, kFirstAlgorithmFlag);
          if (r != root) {
            EXPECT_EQ(static_cast<std::int64_t>(shape.ready_wait_step), firstWaitFor(bc, r, root));
          }
        }
      }
    }
  }
}

TEST(FusedShape, TheOtherPlansOfTheCollectivesAreInterpreted) {
  for (Collective collective : {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    std::vector<Algorithm> others = {Algorithm::kRing, Algorithm::kTree};
    if (collective != Collective::kBroadcast) others.push_back(Algorithm::kRecursiveDoubling);
    if (collective == Collective::kBroadcast) others.push_back(Algorithm::kTwoShot);
    for (Algorithm algorithm : others) {
      const Plan plan = mustBuildCollective(collective, algorithm, 4, false, collective == Collective::kBroadcast);
      for (int r = 0; r < 4; ++r) {
        EXPECT_EQ(matchFusedShape(plan, r).kind, FusedKind::kNone)
            << collectiveName(collective) << " " << algorithmName(algorithm) << " rank " << r;
      }
    }
    const Plan single = mustBuildCollective(collective, Algorithm::kOneShot, 1, false);
    EXPECT_EQ(matchFusedShape(single, 0).kind, FusedKind::kNone) << "one rank has no peer";
  }
  // An allreduce one-shot relabelled as a collective is not that collective's direct plan.
  Plan relabelled = mustBuild(Algorithm::kOneShot, 4, false);
  relabelled.collective = Collective::kAllGather;
  relabelled.num_blocks = 4;
  EXPECT_EQ(matchFusedShape(relabelled, 0).kind, FusedKind::kNone);
}

// A change to any rank's program, not only the caller's, sends every rank to the interpreter: the line
// kernels' protocol involves every rank, so every rank must reach the same verdict.
TEST(FusedShape, AnyChangeToAnyRanksDirectCollectiveProgramFallsBackEverywhere) {
  const auto everyRankInterprets = [](const Plan& plan) {
    for (int r = 0; r < plan.world_size; ++r) {
      if (matchFusedShape(plan, r).kind != FusedKind::kNone) return false;
    }
    return true;
  };
  const auto firstOf = [](RankProgram& program, StepKind kind) -> Step& {
    for (Step& s : program.steps) {
      if (s.kind == kind && !(kind == StepKind::kSignal && s.flag == kDoneFlag)) return s;
    }
    ADD_FAILURE() << "no such step";
    return program.steps.front();
  };
  const Plan rs = mustBuildCollective(Collective::kReduceScatter, Algorithm::kOneShot, 4, false);
  {  // rank 2 folds rank 1's term before rank 0's
    Plan p = rs;
    auto& sources = p.programs[2].sources;
    Step& reduce = firstOf(p.programs[2], StepKind::kReduce);
    std::swap(sources[reduce.src_begin], sources[reduce.src_begin + 1]);
    EXPECT_TRUE(everyRankInterprets(p));
  }
  {  // rank 3 does not finalise (an integer avg would not divide)
    Plan p = rs;
    firstOf(p.programs[3], StepKind::kReduce).finalize = false;
    EXPECT_TRUE(everyRankInterprets(p));
  }
  {  // rank 1 publishes block 2 in the wrong slot
    Plan p = rs;
    firstOf(p.programs[1], StepKind::kCopy).dst.slot = 3;
    EXPECT_TRUE(everyRankInterprets(p));
  }
  const Plan ag = mustBuildCollective(Collective::kAllGather, Algorithm::kOneShot, 4, true);
  {  // rank 0 waits for two signals
    Plan p = ag;
    firstOf(p.programs[0], StepKind::kWait).value = 2;
    EXPECT_TRUE(everyRankInterprets(p));
  }
  {  // rank 3 signals on another flag than everyone else
    Plan p = ag;
    for (Step& s : p.programs[3].steps) {
      if (s.kind == StepKind::kSignal && s.flag != kDoneFlag) s.flag = kFirstAlgorithmFlag + 1;
    }
    for (Step& s : p.programs[3].steps) {
      if (s.kind == StepKind::kWait) s.flag = kFirstAlgorithmFlag + 1;
    }
    EXPECT_TRUE(everyRankInterprets(p));
  }
  {  // an extra copy at the end of rank 1
    Plan p = ag;
    p.programs[1].steps.push_back(firstOf(p.programs[1], StepKind::kCopy));
    EXPECT_TRUE(everyRankInterprets(p));
  }
  const Plan bc = mustBuildCollective(Collective::kBroadcast, Algorithm::kOneShot, 4, false, 2);
  {  // the plan names another root than its programs
    Plan p = bc;
    p.root = 1;
    EXPECT_TRUE(everyRankInterprets(p));
  }
  {  // the root misses its signal to rank 3
    Plan p = bc;
    auto& steps = p.programs[2].steps;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kind == StepKind::kSignal && steps[i].peer == 3 && steps[i].flag != kDoneFlag) {
        steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    EXPECT_TRUE(everyRankInterprets(p));
  }
  {  // rank 0 copies from its own scratch instead of the root's
    Plan p = bc;
    auto& sources = p.programs[0].sources;
    sources[firstOf(p.programs[0], StepKind::kCopy).src_begin].rank = 0;
    EXPECT_TRUE(everyRankInterprets(p));
  }
  {  // a broadcast plan of more chunks
    Plan p = bc;
    p.num_chunks = 2;
    EXPECT_TRUE(everyRankInterprets(p));
  }
}

}  // namespace
}  // namespace peerreduce::gpu
