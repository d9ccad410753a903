// Canaries: deliberately broken plans that the verifier, the simulator's race checker and the
// reference check must each catch. If one of these passes, the harness has gone blind.
#include <gtest/gtest.h>

#include "algorithms/algorithms.h"
#include "plan_runner.h"
#include "verify/verifier.h"

namespace peerreduce::testing {
namespace {

// Removes the first wait of `rank` on an algorithm flag (not the done flag).
Plan withoutFirstDataWait(Plan plan, int rank) {
  auto& steps = plan.programs[static_cast<std::size_t>(rank)].steps;
  for (auto it = steps.begin(); it != steps.end(); ++it) {
    if (it->kind == StepKind::kWait && it->flag != kDoneFlag) {
      steps.erase(it);
      break;
    }
  }
  plan.signal_counts = signalCounts(plan);
  return plan;
}

// Removes the last source of the first multi-source reduce of `rank`.
Plan withoutOneSource(Plan plan, int rank) {
  for (auto& step : plan.programs[static_cast<std::size_t>(rank)].steps) {
    if (step.kind == StepKind::kReduce && step.src_count > 1) {
      step.src_count -= 1;
      break;
    }
  }
  return plan;
}

class CanaryTest : public ::testing::TestWithParam<Algorithm> {};

std::string algorithmTestName(const ::testing::TestParamInfo<Algorithm>& param) {
  std::string name(algorithmName(param.param));
  for (auto& c : name) c = c == '-' ? '_' : c;
  return name;
}

TEST_P(CanaryTest, VerifierCatchesAMissingWait) {
  for (int n : {2, 3, 4, 5, 8}) {
    const Plan good = *buildPlan({GetParam(), n, false});
    ASSERT_TRUE(verifyPlan(good).ok()) << good.description;
    for (int rank = 0; rank < n; ++rank) {
      const Plan broken = withoutFirstDataWait(good, rank);
      const auto r = static_cast<std::size_t>(rank);
      if (broken.programs[r].steps.size() == good.programs[r].steps.size()) continue;  // waits only on done
      const VerifyReport report = verifyPlan(broken);
      EXPECT_FALSE(report.ok()) << good.description << ": dropping rank " << rank << "'s first wait went unnoticed";
    }
  }
}

TEST_P(CanaryTest, RaceCheckerCatchesAMissingWaitOnEverySchedule) {
  const int n = 4;
  const Plan good = *buildPlan({GetParam(), n, false});
  const Plan broken = withoutFirstDataWait(good, 1);
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const PlanRun clean = runPlanOnSim(good, 1000, DataType::kFloat32, ReduceOp::kSum, seed);
    ASSERT_TRUE(clean.status.isOk()) << clean.status.toString();
    EXPECT_TRUE(clean.races.empty()) << clean.races.front();
    EXPECT_EQ(clean.reference_problem, "");
    const PlanRun run = runPlanOnSim(broken, 1000, DataType::kFloat32, ReduceOp::kSum, seed);
    EXPECT_FALSE(run.races.empty()) << good.description << " seed " << seed << ": missing wait not reported";
  }
}

TEST_P(CanaryTest, VerifierAndReferenceCatchAMissingSource) {
  const int n = 4;
  const Plan good = *buildPlan({GetParam(), n, false});
  const Plan broken = withoutOneSource(good, 0);
  EXPECT_FALSE(verifyPlan(broken).ok());
  const PlanRun run = runPlanOnSim(broken, 777, DataType::kInt32, ReduceOp::kSum, 3);
  ASSERT_TRUE(run.status.isOk()) << run.status.toString();
  EXPECT_NE(run.reference_problem, "") << good.description << ": a missing input went unnoticed by the reference";
}

INSTANTIATE_TEST_SUITE_P(EveryAlgorithm, CanaryTest,
                         ::testing::Values(Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing,
                                           Algorithm::kRecursiveDoubling, Algorithm::kRabenseifner),
                         algorithmTestName);

// The other collectives: a plan with a missing wait is caught by the verifier and, on every schedule,
// by the simulator's race checker; a reduce-scatter missing an input by the verifier and the reference.
struct CollectivePlanKind {
  Collective collective;
  Algorithm algorithm;
};

class CollectiveCanaryTest : public ::testing::TestWithParam<CollectivePlanKind> {
 protected:
  static Plan plan(int n) {
    PlanRequest request{GetParam().algorithm, n, false};
    request.collective = GetParam().collective;
    request.root = GetParam().collective == Collective::kBroadcast ? n - 1 : 0;
    return *buildPlan(request);
  }
};

std::string collectiveTestName(const ::testing::TestParamInfo<CollectivePlanKind>& param) {
  std::string name =
      std::string(collectiveName(param.param.collective)) + "_" + std::string(algorithmName(param.param.algorithm));
  for (auto& c : name) c = c == '-' ? '_' : c;
  return name;
}

TEST_P(CollectiveCanaryTest, VerifierCatchesAMissingWait) {
  for (int n : {2, 3, 4, 5, 8}) {
    const Plan good = plan(n);
    ASSERT_TRUE(verifyPlan(good).ok()) << good.description;
    int dropped = 0;
    for (int rank = 0; rank < n; ++rank) {
      const Plan broken = withoutFirstDataWait(good, rank);
      const auto r = static_cast<std::size_t>(rank);
      if (broken.programs[r].steps.size() == good.programs[r].steps.size()) continue;  // waits only on done
      ++dropped;
      EXPECT_FALSE(verifyPlan(broken).ok())
          << good.description << ": dropping rank " << rank << "'s first wait went unnoticed";
    }
    EXPECT_GT(dropped, 0) << good.description << ": no rank waits, so the canary tested nothing";
  }
}

TEST_P(CollectiveCanaryTest, RaceCheckerCatchesAMissingWaitOnEverySchedule) {
  const int n = 4;
  const Plan good = plan(n);
  // The broadcast root (rank 3) never waits; rank 1 waits in every plan.
  const Plan broken = withoutFirstDataWait(good, 1);
  ASSERT_LT(broken.programs[1].steps.size(), good.programs[1].steps.size());
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const PlanRun clean = runPlanOnSim(good, 1000, DataType::kFloat32, ReduceOp::kSum, seed);
    ASSERT_TRUE(clean.status.isOk()) << clean.status.toString();
    EXPECT_TRUE(clean.races.empty()) << clean.races.front();
    EXPECT_EQ(clean.reference_problem, "");
    const PlanRun run = runPlanOnSim(broken, 1000, DataType::kFloat32, ReduceOp::kSum, seed);
    EXPECT_FALSE(run.races.empty()) << good.description << " seed " << seed << ": missing wait not reported";
  }
}

TEST_P(CollectiveCanaryTest, ReferenceCatchesAWrongSource) {
  const int n = 4;
  const Plan good = plan(n);
  Plan broken = good;
  // Rank 1's last data step loses a source (reduce-scatter: one input of its block less) or copies
  // rank 1's own send buffer instead of its source (all-gather, broadcast: another rank's bits).
  RankProgram& program = broken.programs[1];
  for (auto it = program.steps.rbegin(); it != program.steps.rend(); ++it) {
    if (it->kind != StepKind::kCopy && it->kind != StepKind::kReduce) continue;
    if (it->src_count > 1) {
      it->src_count -= 1;
    } else {
      program.sources[it->src_begin] = BufferRef{1, BufferKind::kInput, 0};
    }
    break;
  }
  EXPECT_FALSE(verifyPlan(broken).ok());
  const PlanRun run = runPlanOnSim(broken, 777, DataType::kInt32, ReduceOp::kSum, 3);
  ASSERT_TRUE(run.status.isOk()) << run.status.toString();
  EXPECT_NE(run.reference_problem, "") << good.description << ": a wrong source went unnoticed by the reference";
}

INSTANTIATE_TEST_SUITE_P(EveryCollectivePlan, CollectiveCanaryTest,
                         ::testing::Values(CollectivePlanKind{Collective::kReduceScatter, Algorithm::kOneShot},
                                           CollectivePlanKind{Collective::kReduceScatter, Algorithm::kRing},
                                           CollectivePlanKind{Collective::kAllGather, Algorithm::kOneShot},
                                           CollectivePlanKind{Collective::kAllGather, Algorithm::kRing},
                                           CollectivePlanKind{Collective::kBroadcast, Algorithm::kOneShot},
                                           CollectivePlanKind{Collective::kBroadcast, Algorithm::kRing}),
                         collectiveTestName);

}  // namespace
}  // namespace peerreduce::testing
