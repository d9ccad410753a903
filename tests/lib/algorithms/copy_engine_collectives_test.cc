// Reduce-scatter, all-gather and broadcast by copy engines (lib/algorithms/copy_engine_collectives.cc; the
// copy-engine-two-shot of these collectives): the plans verify at every world size, root and placement,
// every transfer between ranks is a copy engine pulling an owner's published chunk into the reader's own
// output, the simulator's bits equal the direct plans' and the reference's, consecutive operations reuse
// scratch safely, and the choice is forced only (a typed error where a link it needs is missing).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "algorithms/algorithms.h"
#include "core/collective_algorithms.h"
#include "peerreduce/config.h"
#include "plan_runner.h"
#include "sim_cluster.h"
#include "text_contains.h"
#include "verify/verifier.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

// `root` is broadcast's; the others have none (0).
Plan copyEnginePlan(Collective collective, int n, int root = 0, bool in_place = false) {
  PlanRequest request{Algorithm::kCopyEngineTwoShot, n, in_place};
  request.collective = collective;
  request.root = collective == Collective::kBroadcast ? root : 0;
  return *buildPlan(request);
}

Plan directPlan(Collective collective, int n, int root = 0, bool in_place = false) {
  PlanRequest request{Algorithm::kOneShot, n, in_place};
  request.collective = collective;
  request.root = collective == Collective::kBroadcast ? root : 0;
  return *buildPlan(request);
}

TEST(CopyEngineCollectives, EveryCollectiveHasThemAndAnUnknownOneIsRefused) {
  for (const Collective collective : {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    EXPECT_TRUE(collectiveHasAlgorithm(collective, Algorithm::kCopyEngineTwoShot)) << collectiveName(collective);
  }
  PlanRequest request{Algorithm::kCopyEngineTwoShot, 4, false};
  request.collective = static_cast<Collective>(9);
  auto refused = buildPlan(request);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
}

TEST(CopyEngineCollectives, VerifyAtEveryWorldSizeRootAndPlacement) {
  for (int n = 1; n <= 8; ++n) {
    for (bool in_place : {false, true}) {
      const Plan scatter = copyEnginePlan(Collective::kReduceScatter, n, 0, in_place);
      const VerifyReport rs = verifyPlan(scatter);
      EXPECT_TRUE(rs.ok()) << n << " ranks: " << rs.toStatus(scatter.description).toString();
      const Plan gather = copyEnginePlan(Collective::kAllGather, n, 0, in_place);
      const VerifyReport report = verifyPlan(gather);
      EXPECT_TRUE(report.ok()) << n << " ranks: " << report.toStatus(gather.description).toString();
      for (int root = 0; root < n; ++root) {
        const Plan broadcast = copyEnginePlan(Collective::kBroadcast, n, root, in_place);
        const VerifyReport bcast = verifyPlan(broadcast);
        EXPECT_TRUE(bcast.ok()) << n << " ranks, root " << root << ": "
                                << bcast.toStatus(broadcast.description).toString();
      }
    }
  }
}

// Every access to another rank's memory is a copy engine reading the owner's scratch into the reader's
// output (nothing is pushed, nothing lands in scratch to be copied again), each chunk of each other block
// once; the multiprocessors' copies are local.
TEST(CopyEngineCollectives, EveryTransferBetweenRanksIsAPullIntoTheOutput) {
  for (int n : {2, 3, 4, 8}) {
    for (const Collective collective : {Collective::kAllGather, Collective::kBroadcast}) {
      const int root = collective == Collective::kBroadcast ? n - 1 : -1;
      const Plan plan = copyEnginePlan(collective, n, root);
      for (int r = 0; r < n; ++r) {
        const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
        int pulls = 0;
        for (const Step& step : program.steps) {
          if (step.kind != StepKind::kCopy) continue;
          const BufferRef& src = program.sources[step.src_begin];
          if (src.rank == r && step.dst.rank == r) {
            EXPECT_FALSE(step.copy_engine) << "rank " << r << ": " << describeStep(program, step);
            continue;
          }
          ++pulls;
          EXPECT_TRUE(step.copy_engine) << describeStep(program, step);
          EXPECT_EQ(src.kind, BufferKind::kScratch);
          EXPECT_EQ(step.dst, outputOf(r));
        }
        const int expected = collective == Collective::kAllGather ? (n - 1) * kCopyEngineTwoShotStages
                             : r == root                          ? 0
                                                                  : kCopyEngineTwoShotStages;
        EXPECT_EQ(pulls, expected) << collectiveName(collective) << ", " << n << " ranks, rank " << r;
      }
    }
  }
}

// Reduce-scatter pushes: every transfer between ranks is a writer's copy engine putting a chunk of its
// input into an owner's scratch, each followed by a signal to that owner; each owner folds in rank order.
TEST(CopyEngineCollectives, ReduceScatterPushesEachChunkOnceAndSignalsIt) {
  for (int n : {2, 3, 4, 8}) {
    const Plan plan = copyEnginePlan(Collective::kReduceScatter, n);
    for (int r = 0; r < n; ++r) {
      const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
      int pushes = 0;
      for (std::size_t i = 0; i < program.steps.size(); ++i) {
        const Step& step = program.steps[i];
        if (step.kind != StepKind::kCopy) continue;
        ASSERT_TRUE(step.copy_engine) << describeStep(program, step);
        ASSERT_NE(step.dst.rank, r);
        EXPECT_EQ(program.sources[step.src_begin], inputOf(r));
        EXPECT_EQ(step.dst.kind, BufferKind::kScratch);
        const auto signal =
            std::find_if(program.steps.begin() + static_cast<std::ptrdiff_t>(i), program.steps.end(),
                         [&](const Step& s) { return s.kind == StepKind::kSignal && s.peer == step.dst.rank; });
        EXPECT_NE(signal, program.steps.end());
        ++pushes;
      }
      EXPECT_EQ(pushes, (n - 1) * kCopyEngineTwoShotStages) << n << " ranks, rank " << r;
    }
  }
}

TEST(CopyEngineCollectives, SimulatorBitsEqualTheDirectPlansAndTheReference) {
  std::uint64_t seed = 70;
  for (int n : {2, 3, 5}) {
    for (const Collective collective : {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
      for (bool in_place : {false, true}) {
        for (DataType dtype : {DataType::kFloat16, DataType::kFloat32, DataType::kInt8}) {
          for (std::size_t count : {std::size_t{3}, std::size_t{4099}}) {
            ++seed;
            const int root =
                collective == Collective::kBroadcast ? static_cast<int>(seed % static_cast<std::uint64_t>(n)) : 0;
            // Reduce-scatter folds: avg too (an integer divides at the fold, a float premultiplies).
            const ReduceOp op =
                collective == Collective::kReduceScatter && seed % 2 == 0 ? ReduceOp::kAvg : ReduceOp::kSum;
            const testing::PlanRun run =
                testing::runPlanOnSim(copyEnginePlan(collective, n, root, in_place), count, dtype, op, seed);
            const testing::PlanRun direct =
                testing::runPlanOnSim(directPlan(collective, n, root, in_place), count, dtype, op, seed);
            ASSERT_TRUE(run.status.isOk()) << run.status.toString();
            ASSERT_TRUE(run.races.empty()) << run.races.front();
            EXPECT_EQ(run.reference_problem, "");
            ASSERT_EQ(run.outputs, direct.outputs) << collectiveName(collective) << ", " << n << " ranks, root " << root
                                                   << ", in place " << in_place << ", " << count << " elements";
          }
        }
      }
    }
  }
}

TEST(CopyEngineCollectives, ConsecutiveOperationsReuseScratchSafely) {
  for (int n : {2, 4, 6}) {
    const Plan gather = copyEnginePlan(Collective::kAllGather, n);
    const Plan ring = [&] {
      PlanRequest request{Algorithm::kRing, n, false};
      request.collective = Collective::kAllGather;
      return *buildPlan(request);
    }();
    const std::vector<const Plan*> gathers{&gather, &ring, &gather, &gather};
    const VerifyReport report = verifySequence(gathers);
    EXPECT_TRUE(report.ok()) << report.toStatus("all-gathers").toString();
    const Plan from_first = copyEnginePlan(Collective::kBroadcast, n, 0);
    const Plan from_last = copyEnginePlan(Collective::kBroadcast, n, n - 1);
    const std::vector<const Plan*> broadcasts{&from_first, &from_last, &from_first};
    const VerifyReport bcast = verifySequence(broadcasts);
    EXPECT_TRUE(bcast.ok()) << bcast.toStatus("broadcasts").toString();
    // Pushing into owners' scratch after a plan whose ranks read it (the all-gather pulls) needs the
    // owners' "scratch free" first: with it the sequence verifies.
    const Plan scatter = copyEnginePlan(Collective::kReduceScatter, n);
    const std::vector<const Plan*> mixed{&gather, &scatter, &from_last, &scatter, &scatter};
    const VerifyReport both = verifySequence(mixed);
    EXPECT_TRUE(both.ok()) << both.toStatus("mixed").toString();
  }
}

Config allGatherForced() {
  Config config;
  config.all_gather_algorithm = Algorithm::kCopyEngineTwoShot;
  config.broadcast_algorithm = Algorithm::kCopyEngineTwoShot;
  config.timeout = std::chrono::milliseconds(5000);
  return config;
}

TEST(CopyEngineCollectives, ForcedTheyRunAndAreNeverChosenOtherwise) {
  auto automatic = sim::SimCluster::create(4, {}, Config{});
  ASSERT_TRUE(automatic.isOk()) << automatic.status().toString();
  for (const Collective collective : {Collective::kAllGather, Collective::kBroadcast}) {
    const int root = collective == Collective::kBroadcast ? 1 : 0;
    auto report = (*automatic)->comm(0).explainSelection(collective, std::size_t{1} << 24, DataType::kFloat32, root);
    ASSERT_TRUE(report.isOk()) << report.status().toString();
    EXPECT_NE(report->chosen, Algorithm::kCopyEngineTwoShot);
    for (const auto& c : report->candidates) EXPECT_NE(c.algorithm, Algorithm::kCopyEngineTwoShot);
  }
  ASSERT_TRUE(allGatherForced().validate().isOk());
  auto forced = sim::SimCluster::create(3, {}, allGatherForced());
  ASSERT_TRUE(forced.isOk()) << forced.status().toString();
  constexpr std::size_t count = 10001;
  std::vector<std::vector<std::int32_t>> input(3, std::vector<std::int32_t>(count));
  std::vector<std::vector<std::int32_t>> output(3, std::vector<std::int32_t>(3 * count, -1));
  for (int r = 0; r < 3; ++r) {
    for (std::size_t i = 0; i < count; ++i) input[r][i] = static_cast<std::int32_t>(i) * 3 + r;
  }
  for (int r = 0; r < 3; ++r) {
    auto report = (*forced)->comm(r).explainSelection(Collective::kAllGather, count, DataType::kInt32, 0);
    ASSERT_TRUE(report.isOk());
    EXPECT_TRUE(report->forced);
    EXPECT_EQ(report->chosen, Algorithm::kCopyEngineTwoShot);
    ASSERT_TRUE((*forced)->comm(r).allGather(input[r].data(), output[r].data(), count, DataType::kInt32).isOk());
  }
  ASSERT_TRUE((*forced)->runUntilIdle().isOk());
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE((*forced)->comm(r).asyncError().isOk()) << (*forced)->comm(r).asyncError().toString();
    for (int b = 0; b < 3; ++b) {
      for (std::size_t i = 0; i < count; i += 101) {
        ASSERT_EQ(output[r][static_cast<std::size_t>(b) * count + i], static_cast<std::int32_t>(i) * 3 + b)
            << "rank " << r << " block " << b << " element " << i;
      }
    }
  }
}

// A broadcast's readers pull from the root only: a world missing a link between two other ranks still
// runs it, one missing a link to the root is refused at creation with a typed error naming the choice.
TEST(CopyEngineCollectives, ForcedWhereTheRootIsUnreachableIsATypedError) {
  Config config;
  config.broadcast_algorithm = Algorithm::kCopyEngineTwoShot;
  config.timeout = std::chrono::milliseconds(5000);
  sim::SimOptions options;
  options.topology = Topology::fullMesh(4);
  options.topology.setBidirectional(1, 2, LinkInfo{});
  auto cluster = sim::SimCluster::create(4, options, config);
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  auto from_zero = (*cluster)->comm(0).explainSelection(Collective::kBroadcast, 4096, DataType::kFloat32, 0);
  ASSERT_TRUE(from_zero.isOk()) << from_zero.status().toString();
  EXPECT_EQ(from_zero->chosen, Algorithm::kCopyEngineTwoShot);
  auto from_one = (*cluster)->comm(0).explainSelection(Collective::kBroadcast, 4096, DataType::kFloat32, 1);
  ASSERT_FALSE(from_one.isOk());
  EXPECT_TRUE(contains(from_one.status().toString(), "copy-engine-two-shot")) << from_one.status().toString();
}

}  // namespace
}  // namespace peerreduce
