// Canaries: deliberately broken plans that the verifier, the simulator's race checker and the
// reference check must each catch, and a broken avg (a sum divided afterwards) that the reference check
// the avg properties use must reject. If one of these passes, the harness has gone blind.
#include <gtest/gtest.h>

#include <cstring>

#include "algorithms/algorithms.h"
#include "kernels/dispatch.h"
#include "kernels/reduce_ops.h"
#include "plan_runner.h"
#include "reference/reference.h"
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
// The copy-engine two-shot's canaries are in tests/lib/algorithms/copy_engine_two_shot_test.cc: its
// first wait is the owners' "scratch free" handshake, which only a sequence after another plan needs.

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
                                           CollectivePlanKind{Collective::kBroadcast, Algorithm::kTwoShot},
                                           CollectivePlanKind{Collective::kBroadcast, Algorithm::kRing},
                                           CollectivePlanKind{Collective::kReduceScatter,
                                                              Algorithm::kRecursiveDoubling},
                                           CollectivePlanKind{Collective::kReduceScatter, Algorithm::kTree},
                                           CollectivePlanKind{Collective::kAllGather, Algorithm::kRecursiveDoubling},
                                           CollectivePlanKind{Collective::kAllGather, Algorithm::kTree},
                                           CollectivePlanKind{Collective::kBroadcast, Algorithm::kTree}),
                         collectiveTestName);

// ---- avg: the divide-after-sum variant ----

// The average as a sum divided once by the world size (how peerreduce averaged floats before it took
// NCCL's premultiplied sum): each element of `sum`, widened, divided by n and stored again.
std::vector<unsigned char> dividedAfterSum(DataType dtype, std::vector<unsigned char> sum, int n) {
  kernels::visitDataType(static_cast<int>(dtype), false, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = kernels::AccumulatorT<T>;
    for (std::size_t i = 0; i < sum.size() / sizeof(T); ++i) {
      T x;
      std::memcpy(&x, sum.data() + i * sizeof(T), sizeof(T));
      if constexpr (kernels::kIsFloat8<T>) {
        x = kernels::floatToFloat8<T>(kernels::float8ToFloat(x) / static_cast<float>(n));
      } else {
        x = kernels::storeElement<T>(static_cast<Acc>(kernels::loadElement<T>(x) / static_cast<Acc>(n)));
      }
      std::memcpy(sum.data() + i * sizeof(T), &x, sizeof(T));
    }
    return true;
  });
  return sum;
}

class AvgCanaryTest : public ::testing::TestWithParam<CollectivePlanKind> {};

// On inputs near MAX (Payload::kLarge, sim/reference) the divide-after-sum average overflows where the
// true average is finite: the reference check the avg properties rely on must reject it on every plan
// and float dtype, while the premultiplied average of the same plan passes it. fp8 e4m3 is left out: its
// sums saturate at 448 instead of overflowing, so there is no infinity to catch (its premultiplied average
// is checked by the properties like every other's).
TEST_P(AvgCanaryTest, ReferenceCatchesDivideAfterSum) {
  constexpr std::size_t kCount = 100;
  constexpr std::uint64_t kSeed = 17;
  const DataType floats[] = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32, DataType::kFloat64,
                             DataType::kFloat8E5M2};
  for (const int n : {4, 5}) {
    PlanRequest request{GetParam().algorithm, n, false};
    request.collective = GetParam().collective;
    const Plan plan = *buildPlan(request);
    for (const DataType dtype : floats) {
      const PlanRun average = runPlanOnSim(plan, kCount, dtype, ReduceOp::kAvg, kSeed, 1, Topology(), Payload::kLarge);
      ASSERT_TRUE(average.status.isOk()) << average.status.toString();
      EXPECT_EQ(average.reference_problem, "") << plan.description << ", " << dataTypeName(dtype);
      const PlanRun sum = runPlanOnSim(plan, kCount, dtype, ReduceOp::kSum, kSeed, 1, Topology(), Payload::kLarge);
      ASSERT_TRUE(sum.status.isOk()) << sum.status.toString();
      std::vector<const void*> inputs;
      for (const auto& in : sum.inputs) inputs.push_back(in.data());
      for (int r = 0; r < n; ++r) {
        const auto broken = dividedAfterSum(dtype, sum.outputs[static_cast<std::size_t>(r)], n);
        const ReferenceResult expected = plan.collective == Collective::kReduceScatter
                                             ? referenceReduceScatter(dtype, ReduceOp::kAvg, inputs, kCount, r)
                                             : referenceReduce(dtype, ReduceOp::kAvg, inputs, kCount);
        EXPECT_NE(compareToReference(dtype, ReduceOp::kAvg, expected, broken.data(), kCount), "")
            << plan.description << ", " << dataTypeName(dtype) << ", rank " << r
            << ": a sum divided afterwards passed as an average";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryReducingPlan, AvgCanaryTest,
                         ::testing::Values(CollectivePlanKind{Collective::kAllReduce, Algorithm::kOneShot},
                                           CollectivePlanKind{Collective::kAllReduce, Algorithm::kTwoShot},
                                           CollectivePlanKind{Collective::kAllReduce, Algorithm::kRing},
                                           CollectivePlanKind{Collective::kAllReduce, Algorithm::kRecursiveDoubling},
                                           CollectivePlanKind{Collective::kAllReduce, Algorithm::kRabenseifner},
                                           CollectivePlanKind{Collective::kAllReduce, Algorithm::kTree},
                                           CollectivePlanKind{Collective::kReduceScatter, Algorithm::kOneShot},
                                           CollectivePlanKind{Collective::kReduceScatter, Algorithm::kRing},
                                           CollectivePlanKind{Collective::kReduceScatter,
                                                              Algorithm::kRecursiveDoubling},
                                           CollectivePlanKind{Collective::kReduceScatter, Algorithm::kTree}),
                         collectiveTestName);

}  // namespace
}  // namespace peerreduce::testing
