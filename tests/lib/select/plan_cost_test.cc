// The cost model (select/plan_cost.h) predicts what the simulator measures: for one operation, the
// simulator's virtual time and per-link bytes equal estimatePlanCost's, for every plan, count and
// dtype, on every interleaving. Plus the alpha-beta arithmetic on worked examples and its errors.
#include "select/plan_cost.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"
#include "plan_runner.h"

namespace peerreduce {
namespace {

template <typename T>
rc::Gen<T> uniformOf(rc::Gen<T> gen) {
  return rc::gen::resize(rc::kNominalSize, std::move(gen));
}

// The selector and the simulator share TimingModel; any difference means one of them executed the
// plan differently (a different phase split, a missed signal latency, bytes counted twice).
RC_GTEST_PROP(PlanCostProperty, SimulatorVirtualTimeEqualsThePrediction, ()) {
  const Algorithm algorithm = static_cast<Algorithm>(*uniformOf(rc::gen::inRange(1, kBuiltAlgorithmCount)));
  const int n = *uniformOf(rc::gen::inRange(1, 10));
  const bool in_place = *rc::gen::arbitrary<bool>();
  const DataType dtype =
      *uniformOf(rc::gen::element(DataType::kInt8, DataType::kFloat16, DataType::kFloat32, DataType::kUint64));
  const std::size_t count =
      *uniformOf(rc::gen::weightedOneOf<std::size_t>({{1, rc::gen::just<std::size_t>(0)},
                                                      {4, rc::gen::inRange<std::size_t>(1, 200)},
                                                      {2, rc::gen::inRange<std::size_t>(200, 20000)}}));
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  auto plan = buildPlan(PlanRequest{algorithm, n, in_place});
  RC_ASSERT(plan.isOk());

  const testing::PlanRun run = testing::runPlanOnSim(*plan, count, dtype, ReduceOp::kSum, seed);
  RC_ASSERT(run.status.isOk());
  RC_ASSERT(run.races.empty());
  const std::size_t elem = dataTypeSize(dtype);
  auto cost = estimatePlanCost(*plan, ChunkLayout::make(count, plan->num_chunks, elem), elem, Topology::fullMesh(n));
  RC_ASSERT(cost.isOk());
  RC_ASSERT(run.stats.virtual_time_us == cost->time_us);
  RC_ASSERT(run.stats.rank_time_us == cost->rank_finish_us);
  RC_ASSERT(run.stats.link_bytes == cost->link_bytes);
  RC_ASSERT(run.stats.steps == cost->steps);
}

// The launch overhead is part of the shared timing: with a launch cost on every rank, the simulator's
// clock (which charges it at the operation's entry fence) still equals the prediction.
RC_GTEST_PROP(PlanCostProperty, LaunchOverheadIsChargedAlikeByTheSimulator, ()) {
  const Algorithm algorithm = static_cast<Algorithm>(*uniformOf(rc::gen::inRange(1, kBuiltAlgorithmCount)));
  const int n = *uniformOf(rc::gen::inRange(1, 6));
  const std::size_t count = *uniformOf(rc::gen::inRange<std::size_t>(0, 5000));
  DeviceModel device;
  device.launch_overhead_us = *uniformOf(rc::gen::inRange(1, 100)) / 8.0;
  const Topology topology = Topology::fullMesh(n, Topology::defaultNvLink(), device);
  auto plan = buildPlan(PlanRequest{algorithm, n, false});
  RC_ASSERT(plan.isOk());
  const testing::PlanRun run = testing::runPlanOnSim(*plan, count, DataType::kFloat32, ReduceOp::kSum,
                                                     *rc::gen::arbitrary<std::uint64_t>(), 1, topology);
  RC_ASSERT(run.status.isOk());
  auto cost = estimatePlanCost(*plan, ChunkLayout::make(count, plan->num_chunks, 4), 4, topology);
  RC_ASSERT(cost.isOk());
  RC_ASSERT(run.stats.virtual_time_us == cost->time_us);
  RC_ASSERT(run.stats.rank_time_us == cost->rank_finish_us);
}

// Launch overhead shifts every rank's finish by exactly itself, once per plan execution; 0 (the
// default) leaves the default model's times as they were.
TEST(PlanCost, LaunchOverheadIsAddedOncePerExecution) {
  const Plan plan = buildOneShotPlan(2, false);
  const auto layout = ChunkLayout::make(37500, 1, 4);
  auto base = estimatePlanCost(plan, layout, 4, Topology::fullMesh(2));
  ASSERT_TRUE(base.isOk());
  EXPECT_NEAR(base->time_us, 4.35, 1e-9);  // the worked example below, unchanged by the new term
  DeviceModel device;
  device.launch_overhead_us = 2.25;
  auto launched = estimatePlanCost(plan, layout, 4, Topology::fullMesh(2, Topology::defaultNvLink(), device));
  ASSERT_TRUE(launched.isOk());
  EXPECT_NEAR(launched->time_us, 4.35 + 2.25, 1e-9);
  for (std::size_t r = 0; r < 2; ++r) EXPECT_NEAR(launched->rank_finish_us[r], base->rank_finish_us[r] + 2.25, 1e-9);
}

// One rank reducing its input into its output: one phase of 2 x bytes of local traffic.
TEST(PlanCost, SingleRankCostsOneLocalPhase) {
  const Plan plan = buildSingleRankPlan(Algorithm::kOneShot, false);
  const Topology topology = Topology::fullMesh(1);
  const DeviceModel& device = topology.device();
  auto cost = estimatePlanCost(plan, ChunkLayout::make(1000, 1, 4), 4, topology);
  ASSERT_TRUE(cost.isOk()) << cost.status().toString();
  EXPECT_DOUBLE_EQ(cost->time_us, device.step_overhead_us + 8000.0 / (device.local_bandwidth_gbps * 1e3));
  EXPECT_EQ(cost->link_bytes, (std::vector<std::uint64_t>{8000}));
  EXPECT_EQ(cost->steps, 1u);
}

// One-shot on two ranks, by hand (default device: 0.5 us per phase, 0.1 us per signal; links 1 us,
// 150 GB/s; 150000 bytes per rank):
//   copy in -> own scratch            0.5 + 300000 B / 2000 GB/s           = 0.65
//   signal                            + 0.1                                  = 0.75 (visible at 1.75)
//   wait for the peer's signal        max(0.75, 1.75)                        = 1.75
//   reduce own + peer's scratch       0.5 + max(1 + 150000 B / 150 GB/s, ingress 0.33, local 0.15) = +2.5
//   done signal                       + 0.1                                  = 4.35
TEST(PlanCost, OneShotOnTwoRanksMatchesTheAlphaBetaArithmetic) {
  const Plan plan = buildOneShotPlan(2, false);
  constexpr std::size_t kCount = 37500;  // fp32: 150000 bytes
  auto cost = estimatePlanCost(plan, ChunkLayout::make(kCount, 1, 4), 4, Topology::fullMesh(2));
  ASSERT_TRUE(cost.isOk()) << cost.status().toString();
  EXPECT_NEAR(cost->time_us, 4.35, 1e-9);
  EXPECT_NEAR(cost->rank_finish_us[0], 4.35, 1e-9);
  EXPECT_NEAR(cost->rank_finish_us[1], 4.35, 1e-9);
  // Rank 0 moved 4 x 150000 bytes in its own memory (copy: read + write; reduce: own source + output)
  // and read 150000 bytes of rank 1's scratch.
  EXPECT_EQ(cost->link_bytes, (std::vector<std::uint64_t>{600000, 150000, 150000, 600000}));
}

// A phase that moves no bytes costs nothing: with count 0 only the signals take time.
TEST(PlanCost, EmptyOperationCostsOnlyItsSignals) {
  auto cost = estimatePlanCost(buildOneShotPlan(2, false), ChunkLayout::make(0, 1, 4), 4, Topology::fullMesh(2));
  ASSERT_TRUE(cost.isOk());
  EXPECT_NEAR(cost->time_us, 0.1 + 1.0 + 0.1, 1e-12);
}

// Slower links make the same plan slower, never faster.
TEST(PlanCost, SlowerLinksNeverMakeAPlanFaster) {
  const Plan plan = buildTwoShotPlan(4, false);
  const ChunkLayout layout = ChunkLayout::make(1 << 16, plan.num_chunks, 4);
  auto fast = estimatePlanCost(plan, layout, 4, Topology::fullMesh(4));
  auto slow = estimatePlanCost(plan, layout, 4, Topology::fullMesh(4, LinkInfo{LinkClass::kPcie, 5.0, 20.0}));
  ASSERT_TRUE(fast.isOk() && slow.isOk());
  EXPECT_LT(fast->time_us, slow->time_us);
  EXPECT_EQ(fast->link_bytes, slow->link_bytes);
}

TEST(PlanCost, TopologyOfAnotherWorldSizeIsRejected) {
  auto cost = estimatePlanCost(buildRingPlan(4, false), ChunkLayout::make(64, 4, 4), 4, Topology::fullMesh(3));
  ASSERT_FALSE(cost.isOk());
  EXPECT_EQ(cost.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cost.status().message(), "topology has 3 ranks, plan 4");
}

TEST(PlanCost, PlanWithoutSignalCountsIsRejected) {
  Plan plan = buildRingPlan(3, false);
  plan.signal_counts.clear();
  auto cost = estimatePlanCost(plan, ChunkLayout::make(64, 3, 4), 4, Topology::fullMesh(3));
  ASSERT_FALSE(cost.isOk());
  EXPECT_EQ(cost.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(cost.status().message().find("has no signal counts; build it with PlanBuilder"), std::string::npos);
}

// A wait for a signal nobody sends ends the evaluation with an error instead of looping.
TEST(PlanCost, DeadlockedPlanIsAnInternalErrorNamingRankAndStep) {
  Plan plan = buildOneShotPlan(2, false);
  for (Step& step : plan.programs[1].steps) {
    if (step.kind == StepKind::kWait) step.value = 5;
  }
  auto cost = estimatePlanCost(plan, ChunkLayout::make(8, 1, 4), 4, Topology::fullMesh(2));
  ASSERT_FALSE(cost.isOk());
  EXPECT_EQ(cost.status().code(), ErrorCode::kInternal);
  EXPECT_NE(cost.status().message().find("deadlocks at rank 1 step #2"), std::string::npos) << cost.status().message();
}

// The evaluator reuses its buffers between plans; a second evaluation must not see the first's state.
TEST(PlanCost, EvaluatorGivesTheSameAnswerWhenReused) {
  const Topology topology = Topology::fullMesh(4);
  PlanCostEvaluator evaluator(topology);
  const Plan ring = buildRingPlan(4, false);
  const Plan one_shot = buildOneShotPlan(4, false);
  const ChunkLayout ring_layout = ChunkLayout::make(4096, ring.num_chunks, 4);
  const ChunkLayout one_layout = ChunkLayout::make(4096, 1, 4);
  auto first = evaluator.evaluate(ring, ring_layout, 4);
  auto other = evaluator.evaluate(one_shot, one_layout, 4);
  auto again = evaluator.evaluate(ring, ring_layout, 4);
  ASSERT_TRUE(first.isOk() && other.isOk() && again.isOk());
  EXPECT_EQ(first->time_us, again->time_us);
  EXPECT_EQ(first->link_bytes, again->link_bytes);
  EXPECT_EQ(other->time_us, estimatePlanCost(one_shot, one_layout, 4, topology)->time_us);
}

}  // namespace
}  // namespace peerreduce
