// Which programs the fused GPU kernels take (lib/gpu/fused_shape.h), checked without a GPU: every
// rank of every one-shot and two-shot plan the builders make, in place or not, and nothing else.
#include "gpu/fused_shape.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace peerreduce::gpu
