// The copy-engine two-shot and copy-engine copies (Step::copy_engine): the plan verifies at every world
// size, its copies have the shape the GPU executor relies on, the verifier refuses the flag where it
// means nothing, the cost model charges copy-engine copies their own cost (and the simulator the same),
// the simulator's results equal two-shot's bit for bit, and a forced choice behaves as documented.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "peerreduce/config.h"
#include "plan/plan_builder.h"
#include "plan_runner.h"
#include "select/plan_cost.h"
#include "sim_cluster.h"
#include "text_contains.h"
#include "verify/verifier.h"

namespace peerreduce {
namespace {

Plan ceTwoShot(int n, bool in_place = false) {
  return *buildPlan(PlanRequest{Algorithm::kCopyEngineTwoShot, n, in_place});
}

using peerreduce::testing::contains;

TEST(CopyEngineTwoShot, VerifiesAtEveryWorldSizeInBothPlacements) {
  for (int n = 2; n <= 8; ++n) {
    for (bool in_place : {false, true}) {
      const Plan plan = ceTwoShot(n, in_place);
      EXPECT_EQ(plan.algorithm, Algorithm::kCopyEngineTwoShot);
      EXPECT_EQ(plan.num_chunks, kCopyEngineTwoShotStages * n);
      EXPECT_EQ(plan.scratch_slots, kCopyEngineTwoShotStages * n) << "n-1 inbound slots and a result per stage";
      const VerifyReport report = verifyPlan(plan);
      EXPECT_TRUE(report.ok()) << n << " ranks, in place " << in_place << ": "
                               << report.toStatus(plan.description).toString();
    }
  }
}

// Every copy-engine copy is a push of the rank's own input into a peer's scratch (the scatter) or a pull
// of a peer's scratch into the rank's own output (the gather), and each pushed copy is followed by a
// signal to the peer it wrote: the copy's completion is made visible as that signal.
TEST(CopyEngineTwoShot, CopiesArePushesOfInputAndPullsIntoOutputEachPushSignalled) {
  for (int n = 2; n <= 8; ++n) {
    const Plan plan = ceTwoShot(n);
    for (int r = 0; r < n; ++r) {
      const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
      int pushes = 0;
      int pulls = 0;
      for (std::size_t i = 0; i < program.steps.size(); ++i) {
        const Step& step = program.steps[i];
        if (!step.copy_engine) continue;
        ASSERT_EQ(step.kind, StepKind::kCopy);
        const BufferRef& src = program.sources[step.src_begin];
        if (step.dst.rank != r) {
          ++pushes;
          EXPECT_EQ(src, inputOf(r));
          EXPECT_EQ(step.dst.kind, BufferKind::kScratch);
          const auto signal =
              std::find_if(program.steps.begin() + static_cast<std::ptrdiff_t>(i), program.steps.end(),
                           [&](const Step& s) { return s.kind == StepKind::kSignal && s.peer == step.dst.rank; });
          EXPECT_NE(signal, program.steps.end()) << "rank " << r << " step #" << i << " is never signalled";
        } else {
          ++pulls;
          EXPECT_NE(src.rank, r);
          EXPECT_EQ(src.kind, BufferKind::kScratch);
          EXPECT_EQ(step.dst, outputOf(r));
        }
      }
      EXPECT_EQ(pushes, (n - 1) * kCopyEngineTwoShotStages) << "rank " << r;
      EXPECT_EQ(pulls, (n - 1) * kCopyEngineTwoShotStages) << "rank " << r;
    }
  }
}

TEST(CopyEngineVerifier, RefusesTheFlagOnAStepThatIsNotACopy) {
  Plan plan = ceTwoShot(3);
  auto& steps = plan.programs[1].steps;
  const auto reduce =
      std::find_if(steps.begin(), steps.end(), [](const Step& s) { return s.kind == StepKind::kReduce; });
  ASSERT_NE(reduce, steps.end());
  reduce->copy_engine = true;
  const VerifyReport report = verifyPlan(plan);
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(contains(report.problems.front(), "only a copy can be moved by a copy engine"))
      << report.problems.front();
  EXPECT_TRUE(contains(report.problems.front(), "rank 1")) << report.problems.front();
}

// The plan's flags: writers' "pushed" and owners' "scratch free" then "result ready".
constexpr int kPushedFlag = kFirstAlgorithmFlag;
constexpr int kOwnerFlag = kFirstAlgorithmFlag + 1;

// Removes `rank`'s first wait on `flag`; returns the writer it waited for, or -1 when there was none.
int dropFirstWait(Plan& plan, int rank, int flag) {
  auto& steps = plan.programs[static_cast<std::size_t>(rank)].steps;
  const auto wait = std::find_if(steps.begin(), steps.end(),
                                 [&](const Step& s) { return s.kind == StepKind::kWait && s.flag == flag; });
  if (wait == steps.end()) return -1;
  const int writer = wait->peer;
  steps.erase(wait);
  plan.signal_counts = signalCounts(plan);
  return writer;
}

// The canary of the copy engine's ordering: without an owner's wait after a peer's copy-engine push,
// the owner reads the copied chunk unordered with the copy. The verifier says so for every rank and
// world size, and the simulator's race checker on every schedule.
TEST(CopyEngineVerifier, CatchesAMissingWaitAfterACopyEngineCopy) {
  for (int n : {2, 3, 4, 5, 8}) {
    const Plan good = ceTwoShot(n);
    for (int rank = 0; rank < n; ++rank) {
      Plan broken = good;
      const int writer = dropFirstWait(broken, rank, kPushedFlag);
      ASSERT_GE(writer, 0);
      // The wait dropped was for `writer`'s copy-engine push into this rank's scratch.
      const auto& writer_steps = good.programs[static_cast<std::size_t>(writer)].steps;
      EXPECT_TRUE(std::any_of(writer_steps.begin(), writer_steps.end(),
                              [&](const Step& s) { return s.copy_engine && s.dst.rank == rank; }));
      EXPECT_FALSE(verifyPlan(broken).ok()) << n << " ranks: dropping rank " << rank << "'s wait went unnoticed";
    }
  }
  Plan broken = ceTwoShot(4);
  ASSERT_GE(dropFirstWait(broken, 1, kPushedFlag), 0);
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const testing::PlanRun run = testing::runPlanOnSim(broken, 1000, DataType::kFloat32, ReduceOp::kSum, seed);
    EXPECT_FALSE(run.races.empty()) << "seed " << seed << ": missing wait not reported";
  }
}

// The handshake that pushing needs: after a plan whose ranks read an owner's scratch (a tree: every rank
// reads the root's), a writer that pushes into that scratch without the owners' "free" signals overwrites
// what a third rank may still read. The plan alone does not show it (its own readers are its owners), a
// sequence does; with the handshake the sequence verifies. (Dropping one owner's signal is not enough to
// break it: every free signal follows its sender's own earlier reads, so waiting for the others still
// orders them; the writer must skip the whole handshake.)
TEST(CopyEngineVerifier, CatchesAPushWithoutTheOwnersFreeSignalAfterAnotherPlan) {
  const Plan tree = *buildPlan(PlanRequest{Algorithm::kTree, 3, false});
  const Plan good = ceTwoShot(3);
  const std::vector<const Plan*> fine{&tree, &good};
  EXPECT_TRUE(verifySequence(fine).ok()) << verifySequence(fine).toStatus("tree, copy-engine two-shot").toString();
  int caught = 0;
  for (int rank = 0; rank < 3; ++rank) {
    Plan broken = good;
    for (int peer = 0; peer < 2; ++peer) ASSERT_GE(dropFirstWait(broken, rank, kOwnerFlag), 0);
    const std::vector<const Plan*> sequence{&tree, &broken};
    caught += verifySequence(sequence).ok() ? 0 : 1;
  }
  EXPECT_GT(caught, 0) << "no dropped handshake was noticed";
}

TEST(CopyEngineVerifier, CatchesAMissingSourceAndSoDoesTheReference) {
  Plan broken = ceTwoShot(4);
  for (auto& step : broken.programs[0].steps) {
    if (step.kind == StepKind::kReduce) {
      step.src_count -= 1;
      break;
    }
  }
  EXPECT_FALSE(verifyPlan(broken).ok());
  const testing::PlanRun run = testing::runPlanOnSim(broken, 777, DataType::kInt32, ReduceOp::kSum, 3);
  ASSERT_TRUE(run.status.isOk()) << run.status.toString();
  EXPECT_NE(run.reference_problem, "");
}

// Scratch reuse between operations: two copy-engine two-shots in a row, and one after a two-shot, are
// ordered by the entry fence (the owner's inbound slots are rewritten by peers' pushes only after the
// owner's done signal).
TEST(CopyEngineVerifier, ConsecutiveOperationsReuseScratchSafely) {
  for (int n : {2, 5, 8}) {
    const Plan ce = ceTwoShot(n);
    const Plan two_shot = *buildPlan(PlanRequest{Algorithm::kTwoShot, n, false});
    const std::vector<const Plan*> sequence{&two_shot, &ce, &ce, &two_shot};
    const VerifyReport report = verifySequence(sequence);
    EXPECT_TRUE(report.ok()) << report.toStatus("sequence").toString();
  }
}

// The simulator runs the plan: the reference accepts it and its bits equal two-shot's, which folds
// every chunk in the same rank order, for every dtype and op drawn (avg included).
TEST(CopyEngineTwoShot, SimulatorBitsEqualTwoShotAndTheReference) {
  std::uint64_t seed = 11;
  for (int n : {2, 3, 5, 8}) {
    for (DataType dtype : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32, DataType::kInt32}) {
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg}) {
        for (std::size_t count : {std::size_t{37}, std::size_t{4099}}) {
          ++seed;
          const testing::PlanRun ce = testing::runPlanOnSim(ceTwoShot(n), count, dtype, op, seed);
          const testing::PlanRun two =
              testing::runPlanOnSim(*buildPlan(PlanRequest{Algorithm::kTwoShot, n, false}), count, dtype, op, seed);
          ASSERT_TRUE(ce.status.isOk()) << ce.status.toString();
          ASSERT_TRUE(ce.races.empty()) << ce.races.front();
          EXPECT_EQ(ce.reference_problem, "");
          ASSERT_EQ(ce.outputs, two.outputs)
              << n << " ranks, " << dataTypeName(dtype) << " " << reduceOpName(op) << ", " << count << " elements";
        }
      }
    }
  }
}

// A hand-built phase: rank 0 pushes chunks by copy engine. Each copy costs the engine's launch plus its
// bytes at the engine's rate, copies to one peer queue one after another, copies to different peers run
// at once, and the multiprocessors' link figures are not charged (the link here is 1000 times slower).
TEST(CopyEngineCost, ChargesLaunchAndRatePerQueueNotTheLinks) {
  constexpr int n = 3;
  DeviceModel device;
  device.copy_engine_launch_us = 3.0;
  device.copy_engine_gbps = 100.0;
  const Topology topology = Topology::fullMesh(n, LinkInfo{LinkClass::kNvLink, 1.0, 0.1}, device);
  const std::size_t count = 1000;  // fp32: 4000 bytes per chunk of one
  const ChunkLayout layout = ChunkLayout::make(count, 1, 4);
  const double per_copy = device.copy_engine_launch_us + 4000.0 / (device.copy_engine_gbps * 1e3);
  auto phase_of = [&](const std::vector<int>& targets) {
    PlanBuilder b(Algorithm::kCopyEngineTwoShot, n, 1, 2, false);
    for (std::size_t i = 0; i < targets.size(); ++i) {
      b.copyEngineCopy(0, 0, inputOf(0), scratchOf(targets[i], static_cast<int>(i)));
    }
    Plan plan = b.finish("hand-built");
    return estimatePlanCost(plan, layout, 4, topology);
  };
  const auto one = phase_of({1});
  ASSERT_TRUE(one.isOk()) << one.status().toString();
  // The phase, then finish()'s done signal to rank 1.
  EXPECT_DOUBLE_EQ(one->rank_finish_us[0], device.step_overhead_us + per_copy + device.signal_overhead_us);
  const auto same_peer = phase_of({1, 1});
  ASSERT_TRUE(same_peer.isOk());
  EXPECT_DOUBLE_EQ(same_peer->rank_finish_us[0], device.step_overhead_us + 2 * per_copy + device.signal_overhead_us);
  const auto two_peers = phase_of({1, 2});
  ASSERT_TRUE(two_peers.isOk());
  EXPECT_DOUBLE_EQ(two_peers->rank_finish_us[0], device.step_overhead_us + per_copy + 2 * device.signal_overhead_us);
  // The bytes still count as traffic on the link they cross.
  EXPECT_EQ(one->link_bytes[0 * n + 1], 4000u) << "the write into the peer, as every copy's";
  EXPECT_EQ(one->link_bytes[0 * n + 0], 4000u) << "the read of the own input";
}

// The simulator charges what the model predicts for the copy-engine two-shot with copy-engine figures
// other than the defaults, and a slower copy engine makes the plan slower.
TEST(CopyEngineCost, SimulatorTimeEqualsThePredictionWithOwnEngineFigures) {
  double previous = 0.0;
  for (double gbps : {400.0, 40.0}) {
    DeviceModel device;
    device.copy_engine_launch_us = 1.5;
    device.copy_engine_gbps = gbps;
    const Topology topology = Topology::fullMesh(4, Topology::defaultNvLink(), device);
    const Plan plan = ceTwoShot(4);
    const testing::PlanRun run = testing::runPlanOnSim(plan, 50000, DataType::kFloat32, ReduceOp::kSum, 9, 1, topology);
    ASSERT_TRUE(run.status.isOk()) << run.status.toString();
    const auto cost = estimatePlanCost(plan, ChunkLayout::make(50000, plan.num_chunks, 4), 4, topology);
    ASSERT_TRUE(cost.isOk());
    EXPECT_EQ(run.stats.virtual_time_us, cost->time_us);
    EXPECT_GT(cost->time_us, previous);
    previous = cost->time_us;
  }
}

Config forcedConfig(Algorithm algorithm) {
  Config config;
  config.algorithm = algorithm;
  config.timeout = std::chrono::milliseconds(5000);
  return config;
}

TEST(CopyEngineChoice, RunsOnlyWhenForced) {
  auto automatic = sim::SimCluster::create(4, {}, forcedConfig(Algorithm::kAuto));
  ASSERT_TRUE(automatic.isOk()) << automatic.status().toString();
  for (std::size_t count : {std::size_t{1} << 10, std::size_t{1} << 26}) {
    auto report = (*automatic)->comm(0).explainSelection(count, DataType::kFloat32);
    ASSERT_TRUE(report.isOk());
    EXPECT_NE(report->chosen, Algorithm::kCopyEngineTwoShot);
    for (const auto& c : report->candidates) EXPECT_NE(c.algorithm, Algorithm::kCopyEngineTwoShot);
  }
  auto forced = sim::SimCluster::create(4, {}, forcedConfig(Algorithm::kCopyEngineTwoShot));
  ASSERT_TRUE(forced.isOk()) << forced.status().toString();
  auto report = (*forced)->comm(3).explainSelection(std::size_t{1} << 20, DataType::kFloat32);
  ASSERT_TRUE(report.isOk());
  EXPECT_TRUE(report->forced);
  EXPECT_EQ(report->chosen, Algorithm::kCopyEngineTwoShot);
  // And it reduces: every rank holds the sum, and the simulator's time is the prediction.
  constexpr std::size_t count = 70000;
  std::vector<std::vector<std::int32_t>> data(4, std::vector<std::int32_t>(count));
  for (int r = 0; r < 4; ++r) {
    for (std::size_t i = 0; i < count; ++i) data[r][i] = static_cast<std::int32_t>(i % 1000) + r;
  }
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(
        (*forced)->comm(r).allreduce(data[r].data(), data[r].data(), count, DataType::kInt32, ReduceOp::kSum).isOk());
  }
  ASSERT_TRUE((*forced)->runUntilIdle().isOk());
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE((*forced)->comm(r).asyncError().isOk());
    for (std::size_t i = 0; i < count; i += 331) ASSERT_EQ(data[r][i], 4 * static_cast<std::int32_t>(i % 1000) + 6);
  }
  auto priced = (*forced)->comm(0).explainSelection(count, DataType::kInt32);
  ASSERT_TRUE(priced.isOk());
  EXPECT_NEAR((*forced)->world().stats().virtual_time_us, priced->candidates.front().predicted_us, 1e-6);
}

TEST(CopyEngineChoice, ForcedOnAWorldWithoutEveryLinkIsATypedErrorNamingIt) {
  sim::SimOptions options;
  options.topology = Topology::fullMesh(4);
  options.topology.setBidirectional(0, 2, LinkInfo{});
  auto cluster = sim::SimCluster::create(4, options, forcedConfig(Algorithm::kCopyEngineTwoShot));
  ASSERT_FALSE(cluster.isOk());
  EXPECT_EQ(cluster.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(cluster.status().message(), "copy-engine-two-shot")) << cluster.status().message();
}

// The other collectives have it too (lib/algorithms/copy_engine_collectives.cc), so the allreduce's
// setting forces theirs; a collective's own setting may name it, and one naming an algorithm the
// collective lacks is refused naming the setting.
TEST(CopyEngineChoice, OtherCollectivesRunItForcedAndTheirOwnSettingMayNameIt) {
  auto cluster = sim::SimCluster::create(3, {}, forcedConfig(Algorithm::kCopyEngineTwoShot));
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  auto report = (*cluster)->comm(0).explainSelection(Collective::kReduceScatter, 4096, DataType::kFloat32, 0);
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_TRUE(report->forced);
  EXPECT_EQ(report->chosen, Algorithm::kCopyEngineTwoShot);
  Config config;
  config.reduce_scatter_algorithm = Algorithm::kCopyEngineTwoShot;
  EXPECT_TRUE(config.validate().isOk());
  config.reduce_scatter_algorithm = Algorithm::kRabenseifner;
  const Status status = config.validate();
  ASSERT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(status.message(), "PEERREDUCE_ALGO_REDUCE_SCATTER")) << status.message();
}

}  // namespace
}  // namespace peerreduce
