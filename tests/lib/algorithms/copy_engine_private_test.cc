// Private scratch slots (Plan::private_slots) and the copy-engine two-shot that reduces from them
// (PlanRequest::reduce_from_private, the form host-staged worlds get): the plan verifies and its bits
// equal two-shot's, the multiprocessors never read or write shared scratch (every byte over the host's
// memory is a copy engine's), the bytes each rank moves up and down are the host path's bound, the
// verifier refuses a step naming a peer's private slot, the text format carries the count, and a forced
// choice on a world without peer access builds this form and reduces exactly.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "peerreduce/config.h"
#include "plan/plan_text.h"
#include "plan_runner.h"
#include "sim_cluster.h"
#include "text_contains.h"
#include "verify/verifier.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

Plan privateTwoShot(int n, bool in_place = false) {
  PlanRequest request{Algorithm::kCopyEngineTwoShot, n, in_place};
  request.reduce_from_private = true;
  return *buildPlan(request);
}

TEST(CopyEnginePrivate, VerifiesAtEveryWorldSizeWithItsPrivateSlotsLast) {
  for (int n = 2; n <= 8; ++n) {
    for (bool in_place : {false, true}) {
      const Plan plan = privateTwoShot(n, in_place);
      EXPECT_EQ(plan.private_slots, kCopyEngineTwoShotStages * (n - 1)) << "one per inbound shard and stage";
      EXPECT_EQ(plan.scratch_slots, kCopyEngineTwoShotStages * n + plan.private_slots);
      const VerifyReport report = verifyPlan(plan);
      EXPECT_TRUE(report.ok()) << n << " ranks, in place " << in_place << ": "
                               << report.toStatus(plan.description).toString();
    }
  }
  EXPECT_EQ(buildPlan(PlanRequest{Algorithm::kCopyEngineTwoShot, 4, false})->private_slots, 0)
      << "the form for device memory keeps none";
}

// What crosses PCIe in a host-staged world is every access to shared scratch: all of it by copy engine,
// S up and 2 (n - 1) / n S down per rank for an operation of S bytes (the scatter's (n - 1) / n S and the
// result's S / n up; the download of the inbound shards and the gather down), the bound's bytes.
TEST(CopyEnginePrivate, EveryAccessToSharedScratchIsACopyEnginesAndMovesTheBoundsBytes) {
  for (int n = 2; n <= 8; ++n) {
    const Plan plan = privateTwoShot(n);
    const int first_private = firstPrivateSlot(plan);
    const auto shared = [&](const BufferRef& ref) {
      return ref.kind == BufferKind::kScratch && ref.slot < first_private;
    };
    for (int r = 0; r < n; ++r) {
      const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
      int up = 0;    // chunks (one stage's shard each) written into shared scratch
      int down = 0;  // chunks read from it
      for (const Step& step : program.steps) {
        if (step.kind != StepKind::kCopy && step.kind != StepKind::kReduce) continue;
        bool touches_shared = shared(step.dst);
        for (std::uint32_t i = 0; i < step.src_count; ++i) {
          touches_shared = touches_shared || shared(program.sources[step.src_begin + i]);
        }
        if (!touches_shared) continue;
        EXPECT_TRUE(step.copy_engine) << "rank " << r << ": " << describeStep(program, step);
        up += shared(step.dst) ? 1 : 0;
        down += shared(program.sources[step.src_begin]) ? 1 : 0;
      }
      // Chunks are S / (stages x n) each.
      EXPECT_EQ(up, kCopyEngineTwoShotStages * n) << "rank " << r << ": S up";
      EXPECT_EQ(down, kCopyEngineTwoShotStages * 2 * (n - 1)) << "rank " << r << ": 2 (n - 1) / n S down";
    }
  }
}

TEST(CopyEnginePrivate, SimulatorBitsEqualTwoShotAndTheReference) {
  std::uint64_t seed = 40;
  for (int n : {2, 3, 4, 7}) {
    for (bool in_place : {false, true}) {
      for (DataType dtype : {DataType::kBFloat16, DataType::kFloat32, DataType::kInt32}) {
        for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
          for (std::size_t count : {std::size_t{29}, std::size_t{6001}}) {
            ++seed;
            const testing::PlanRun run = testing::runPlanOnSim(privateTwoShot(n, in_place), count, dtype, op, seed);
            const testing::PlanRun two = testing::runPlanOnSim(
                *buildPlan(PlanRequest{Algorithm::kTwoShot, n, in_place}), count, dtype, op, seed);
            ASSERT_TRUE(run.status.isOk()) << run.status.toString();
            ASSERT_TRUE(run.races.empty()) << run.races.front();
            EXPECT_EQ(run.reference_problem, "");
            ASSERT_EQ(run.outputs, two.outputs) << n << " ranks, in place " << in_place << ", " << dataTypeName(dtype)
                                                << " " << reduceOpName(op) << ", " << count << " elements";
          }
        }
      }
    }
  }
}

TEST(CopyEnginePrivate, ConsecutiveOperationsAndOtherPlansReuseScratchSafely) {
  for (int n : {2, 3, 6}) {
    const Plan mine = privateTwoShot(n);
    const Plan ce = *buildPlan(PlanRequest{Algorithm::kCopyEngineTwoShot, n, false});
    const Plan ring = *buildPlan(PlanRequest{Algorithm::kRing, n, false});
    const std::vector<const Plan*> sequence{&ring, &mine, &mine, &ce, &mine};
    const VerifyReport report = verifySequence(sequence);
    EXPECT_TRUE(report.ok()) << report.toStatus("sequence").toString();
  }
}

// A private slot is its rank's own: a step of another rank naming it is refused, naming the slot, the
// rank and the range; an owner's own use is fine (the plan above).
TEST(PrivateSlotVerifier, RefusesAPeerNamingAPrivateSlot) {
  Plan plan = privateTwoShot(3);
  const int slot = firstPrivateSlot(plan);
  RankProgram& program = plan.programs[1];
  bool edited = false;
  for (Step& step : program.steps) {
    if (step.copy_engine && step.dst.rank != 1 && step.dst.kind == BufferKind::kScratch) {
      step.dst.slot = slot;  // a push into rank dst's private slot
      edited = true;
      break;
    }
  }
  ASSERT_TRUE(edited);
  const VerifyReport report = verifyPlan(plan);
  ASSERT_FALSE(report.ok());
  EXPECT_TRUE(contains(report.problems.front(), "private slot " + std::to_string(slot))) << report.problems.front();
  EXPECT_TRUE(contains(report.problems.front(), "rank 1")) << report.problems.front();
}

TEST(PrivateSlotVerifier, RefusesACountOutsideTheScratchSlots) {
  for (int bad : {-1, 1000}) {
    Plan plan = privateTwoShot(2);
    plan.private_slots = bad;
    const VerifyReport report = verifyPlan(plan);
    ASSERT_FALSE(report.ok()) << bad;
    EXPECT_TRUE(contains(report.problems.front(), "private_slots " + std::to_string(bad))) << report.problems.front();
  }
}

TEST(PrivateSlotText, RoundTripsAndRefusesMoreThanTheSlots) {
  const Plan plan = privateTwoShot(3);
  const std::string text = formatPlanText(plan);
  EXPECT_TRUE(contains(text, "\nprivate " + std::to_string(plan.private_slots) + "\n")) << text;
  auto parsed = parsePlanText(text);
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed->plan.private_slots, plan.private_slots);
  EXPECT_EQ(parsed->plan.scratch_slots, plan.scratch_slots);
  EXPECT_TRUE(verifyPlan(parsed->plan).ok());
  EXPECT_FALSE(contains(formatPlanText(*buildPlan(PlanRequest{Algorithm::kTwoShot, 3, false})), "private"))
      << "a plan without private slots prints as before";

  const std::string header = "peerreduce-plan 1\ncollective allreduce\nworld 1\nchunks 1\nslots 2\nflags 1\n";
  const std::string body = "rank 0\n  copy c0 [in0] -> out0\nend\n";
  auto too_many = parsePlanText(header + "private 3\n" + body);
  ASSERT_FALSE(too_many.isOk());
  EXPECT_EQ(too_many.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(too_many.status().message(), "private 3")) << too_many.status().message();
  auto twice = parsePlanText(header + "private 1\nprivate 1\n" + body);
  ASSERT_FALSE(twice.isOk());
  EXPECT_TRUE(contains(twice.status().message(), "private is given twice")) << twice.status().message();
  auto fine = parsePlanText(header + "private 2\n" + body);
  ASSERT_TRUE(fine.isOk()) << fine.status().toString();
  EXPECT_EQ(fine->plan.private_slots, 2);
}

// Forced on a world without peer access (every link host-staged), the copy-engine two-shot is built in
// its private form, and it reduces exactly; on NVLink it keeps the other.
TEST(CopyEnginePrivate, ForcedOnAHostStagedWorldBuildsThePrivateFormAndReduces) {
  Config config;
  config.algorithm = Algorithm::kCopyEngineTwoShot;
  config.timeout = std::chrono::milliseconds(5000);
  config.link_mask = "host:all";
  constexpr int n = 3;
  sim::SimOptions options;
  options.topology = Topology(n);
  auto cluster = sim::SimCluster::create(n, options, config);
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  auto report = (*cluster)->comm(1).explainSelection(std::size_t{1} << 20, DataType::kFloat32);
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(report->chosen, Algorithm::kCopyEngineTwoShot);
  EXPECT_TRUE(contains(report->plan, "private slots")) << report->plan;
  constexpr std::size_t count = 50001;
  std::vector<std::vector<std::int32_t>> data(n, std::vector<std::int32_t>(count));
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < count; ++i) data[r][i] = static_cast<std::int32_t>(i % 777) * (r + 1);
  }
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(
        (*cluster)->comm(r).allreduce(data[r].data(), data[r].data(), count, DataType::kInt32, ReduceOp::kSum).isOk());
  }
  ASSERT_TRUE((*cluster)->runUntilIdle().isOk());
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE((*cluster)->comm(r).asyncError().isOk()) << (*cluster)->comm(r).asyncError().toString();
    for (std::size_t i = 0; i < count; i += 97) ASSERT_EQ(data[r][i], static_cast<std::int32_t>(i % 777) * 6) << i;
  }

  config.link_mask.clear();
  auto nvlink = sim::SimCluster::create(n, {}, config);
  ASSERT_TRUE(nvlink.isOk()) << nvlink.status().toString();
  auto direct = (*nvlink)->comm(0).explainSelection(std::size_t{1} << 20, DataType::kFloat32);
  ASSERT_TRUE(direct.isOk());
  EXPECT_FALSE(contains(direct->plan, "private slots")) << direct->plan;
}

}  // namespace
}  // namespace peerreduce
