// The GPU's schedule of a program with copy-engine copies (lib/gpu/copy_engine_schedule.h): every step
// is in exactly one part, in order; no copy is issued before the entry fence's launch or after the
// done signals' launch; a part with copies holds data steps only, none of which touches memory another
// one writes; signals and waits stay in launches; and the copy-engine two-shot's reductions share a
// part with copies (that is where copies overlap reductions).
#include "gpu/copy_engine_schedule.h"

#include <gtest/gtest.h>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce::gpu {
namespace {

bool isData(const Step& s) { return s.kind == StepKind::kCopy || s.kind == StepKind::kReduce; }

void checkSchedule(const RankProgram& program, int rank, const std::vector<ScheduledPart>& parts) {
  ASSERT_GE(parts.size(), 2u);
  EXPECT_TRUE(parts.front().copies.empty()) << "the entry fence's launch comes before any copy";
  EXPECT_EQ(parts.front().begin, 0u);
  EXPECT_TRUE(parts.back().copies.empty()) << "the done signals' launch comes after every copy";
  EXPECT_EQ(parts.back().end, program.steps.size());
  std::uint32_t next = 0;
  std::size_t copies = 0;
  for (const ScheduledPart& part : parts) {
    EXPECT_EQ(part.begin, next) << "parts cover the program in order";
    EXPECT_LE(part.begin, part.end);
    next = part.end;
    if (part.copies.empty()) {
      for (std::uint32_t i = part.begin; i < part.end; ++i) EXPECT_FALSE(program.steps[i].copy_engine) << i;
      continue;
    }
    std::uint32_t previous = part.begin;
    for (const EngineCopy& copy : part.copies) {
      EXPECT_GE(copy.step, previous);
      EXPECT_LT(copy.step, part.end);
      EXPECT_TRUE(program.steps[copy.step].copy_engine);
      EXPECT_EQ(copy.queue, copyEngineQueue(program, program.steps[copy.step], rank));
      previous = copy.step + 1;
    }
    copies += part.copies.size();
    for (std::uint32_t i = part.begin; i < part.end; ++i) {
      EXPECT_TRUE(isData(program.steps[i])) << "signals and waits are never beside copies: step " << i;
      for (std::uint32_t k = part.begin; k < i; ++k) {
        const Step& a = program.steps[k];
        const Step& b = program.steps[i];
        // Writes never meet another step's access in a part (scratch slots here are distinct per rank).
        if (a.dst.kind == BufferKind::kScratch && b.dst.kind == BufferKind::kScratch) {
          EXPECT_FALSE(a.dst == b.dst) << "steps " << k << " and " << i << " write one slot";
        }
        for (std::uint32_t s = 0; s < b.src_count; ++s) {
          const BufferRef& src = program.sources[b.src_begin + s];
          if (src.kind == BufferKind::kScratch) {
            EXPECT_FALSE(src == a.dst) << "step " << i << " reads what " << k << " wrote";
          }
        }
      }
    }
  }
  std::size_t expected = 0;
  for (const Step& s : program.steps) expected += s.copy_engine ? 1 : 0;
  EXPECT_EQ(copies, expected) << "every copy-engine copy is issued once";
}

TEST(CopyEngineSchedule, CoversEveryRankOfTheCopyEngineTwoShotAtEveryWorldSize) {
  for (int n = 2; n <= 8; ++n) {
    for (bool in_place : {false, true}) {
      const Plan plan = *buildPlan(PlanRequest{Algorithm::kCopyEngineTwoShot, n, in_place});
      for (int r = 0; r < n; ++r) {
        SCOPED_TRACE(std::to_string(n) + " ranks, rank " + std::to_string(r));
        const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
        const auto parts = scheduleCopyEngineProgram(program, r);
        checkSchedule(program, r, parts);
        // Each stage's reduction runs beside copies (the next stage's scatter or the previous gather).
        int overlapped = 0;
        for (const ScheduledPart& part : parts) {
          if (part.copies.empty()) continue;
          for (std::uint32_t i = part.begin; i < part.end; ++i)
            overlapped += program.steps[i].kind == StepKind::kReduce;
        }
        EXPECT_EQ(overlapped, kCopyEngineTwoShotStages);
      }
    }
  }
}

TEST(CopyEngineSchedule, AProgramWithoutCopyEngineCopiesIsOneLaunch) {
  const Plan plan = *buildPlan(PlanRequest{Algorithm::kTwoShot, 4, false});
  EXPECT_TRUE(scheduleCopyEngineProgram(plan.programs[1], 1).empty());
}

// A copy that reads what the step before it wrote may not run beside it: the part is cut there, and a
// copy as the program's first step still waits for the entry fence's launch.
TEST(CopyEngineSchedule, CutsAPartWhereACopyDependsOnAnEarlierStep) {
  PlanBuilder b(Algorithm::kCopyEngineTwoShot, 2, 1, 2, false);
  b.copyEngineCopy(0, 0, inputOf(0), scratchOf(0, 0));
  b.copyEngineCopy(0, 0, scratchOf(0, 0), scratchOf(1, 0));  // reads the first copy's slot
  b.copy(0, 0, inputOf(0), outputOf(0));
  b.signal(0, 1, 1);
  const Plan plan = b.finish("hand-built");
  const RankProgram& program = plan.programs[0];
  const auto parts = scheduleCopyEngineProgram(program, 0);
  checkSchedule(program, 0, parts);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].end, 0u) << "an empty launch: the entry fence";
  ASSERT_EQ(parts[1].copies.size(), 1u);
  EXPECT_EQ(parts[1].copies[0].queue, 0) << "a local copy queues on the rank's own queue";
  ASSERT_EQ(parts[2].copies.size(), 1u);
  EXPECT_EQ(parts[2].copies[0].queue, 3) << "a write into rank 1";
  EXPECT_TRUE(parts[2].has_kernel_work) << "the independent local copy runs beside it";
  EXPECT_TRUE(parts[3].copies.empty());
}

}  // namespace
}  // namespace peerreduce::gpu

namespace peerreduce::gpu {
namespace {

TEST(CopyEngineSchedule, CopyEnginesRunOnlyWhereTheyMoveTheBitsTheInterpreterWould) {
  EXPECT_TRUE(runsOnCopyEngines(true, true, ReduceOp::kSum, DataType::kFloat32));
  EXPECT_TRUE(runsOnCopyEngines(true, true, ReduceOp::kAvg, DataType::kInt32))
      << "an integer avg divides at the reduction";
  EXPECT_FALSE(runsOnCopyEngines(true, true, ReduceOp::kAvg, DataType::kBFloat16))
      << "a copy would have to premultiply";
  EXPECT_FALSE(runsOnCopyEngines(true, false, ReduceOp::kSum, DataType::kFloat32));
  EXPECT_FALSE(runsOnCopyEngines(false, true, ReduceOp::kSum, DataType::kFloat32))
      << "off unless PEERREDUCE_GPU_COPY_ENGINES=1: the interpreter runs the plan whole";
}

}  // namespace
}  // namespace peerreduce::gpu
