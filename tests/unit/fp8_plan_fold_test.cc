// fp8 allreduces on the simulator, through every algorithm's plan, give bit for bit what a host fold of the
// same inputs in the plan's own order gives. The fold is a sequential interpreter of the plan written here
// (a rank runs its steps until a wait its counters do not satisfy, then the next rank) whose arithmetic is
// the test reference's, not the kernels': operands decoded by the reference, each pairwise step computed
// exactly in long double and rounded once (roundToFloatBits), avg's inputs premultiplied by 1/n rounded to
// fp8 where a step reads a send buffer. Since fp8 rounds every step (peerreduce/types.h), the bits depend on
// the whole fold order, so any difference in how the simulator or the plan orders a reduction shows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "plan_runner.h"
#include "reference/reference.h"

namespace peerreduce::testing {
namespace {

// One fp8 element per byte.
using Bytes = std::vector<std::uint8_t>;

class HostFold {
 public:
  HostFold(const Plan& plan, DataType dtype, ReduceOp op, std::size_t count)
      : plan_(plan),
        dtype_(dtype),
        op_(op),
        count_(count),
        layout_(ChunkLayout::make(count, plan.num_chunks, 1)),
        reciprocal_(decode(static_cast<std::uint8_t>(
            roundToFloatBits(dtype, static_cast<float>(1.0 / static_cast<double>(plan.world_size)))))) {}

  // The outputs of every rank, or a problem (a deadlock: the plan waits for a signal nobody sends).
  std::vector<Bytes> run(const std::vector<std::vector<unsigned char>>& inputs, std::string& problem) {
    const auto n = static_cast<std::size_t>(plan_.world_size);
    for (std::size_t r = 0; r < n; ++r) {
      inputs_.emplace_back(inputs[r].begin(), inputs[r].end());
      outputs_.emplace_back(count_, std::uint8_t{0});
      scratch_.emplace_back(static_cast<std::size_t>(plan_.scratch_slots) * layout_.chunk_capacity, std::uint8_t{0});
    }
    counters_.assign(n * n * static_cast<std::size_t>(plan_.num_flags), 0);
    std::vector<std::size_t> next(n, 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (std::size_t r = 0; r < n; ++r) {
        const RankProgram& program = plan_.programs[r];
        while (next[r] < program.steps.size() && runStep(static_cast<int>(r), program, program.steps[next[r]])) {
          ++next[r];
          progress = true;
        }
      }
    }
    for (std::size_t r = 0; r < n; ++r) {
      if (next[r] < plan_.programs[r].steps.size()) problem = "rank " + std::to_string(r) + " never finishes";
    }
    return outputs_;
  }

 private:
  long double decode(std::uint8_t bits) const { return decodeElement(dtype_, &bits, 0); }
  std::uint8_t round(long double value) const { return static_cast<std::uint8_t>(roundToFloatBits(dtype_, value)); }

  std::uint32_t& counter(int holder, int writer, int flag) {
    const auto n = static_cast<std::size_t>(plan_.world_size);
    return counters_[(static_cast<std::size_t>(holder) * n + static_cast<std::size_t>(writer)) *
                         static_cast<std::size_t>(plan_.num_flags) +
                     static_cast<std::size_t>(flag)];
  }

  // Where chunk `chunk` of a step lives in `ref`'s buffer.
  std::uint8_t* locate(const BufferRef& ref, int chunk) {
    const auto rank = static_cast<std::size_t>(ref.rank);
    switch (ref.kind) {
      case BufferKind::kInput:
        return inputs_[rank].data() + userChunkOffset(plan_.collective, ref.kind, layout_, count_, chunk);
      case BufferKind::kOutput:
        return outputs_[rank].data() + userChunkOffset(plan_.collective, ref.kind, layout_, count_, chunk);
      case BufferKind::kScratch:
        return scratch_[rank].data() + static_cast<std::size_t>(ref.slot) * layout_.chunk_capacity;
    }
    return nullptr;
  }

  // A source element as it enters the fold: avg premultiplies what it reads from a send buffer.
  std::uint8_t term(const BufferRef& source, std::uint8_t value) const {
    if (op_ != ReduceOp::kAvg || source.kind != BufferKind::kInput) return value;
    return round(decode(value) * reciprocal_);
  }

  std::uint8_t combine(std::uint8_t a, std::uint8_t b) const {
    switch (op_) {
      case ReduceOp::kSum:
      case ReduceOp::kAvg:
        return round(decode(a) + decode(b));
      case ReduceOp::kProd:
        return round(decode(a) * decode(b));
      case ReduceOp::kMin:
        return decode(b) < decode(a) ? b : a;  // the payloads hold no NaN
      case ReduceOp::kMax:
        return decode(a) < decode(b) ? b : a;
    }
    return a;
  }

  // Runs one step; false when it is a wait that is not yet satisfied.
  bool runStep(int rank, const RankProgram& program, const Step& step) {
    switch (step.kind) {
      case StepKind::kWait:
        return counter(rank, step.peer, step.flag) >= step.value;
      case StepKind::kSignal:
        ++counter(step.peer, rank, step.flag);
        return true;
      case StepKind::kCopy:
      case StepKind::kReduce:
        break;
    }
    const std::size_t size = layout_.size(layout_.chunkOf(step.chunk));
    Bytes folded(size);
    for (std::uint32_t k = 0; k < step.src_count; ++k) {
      const BufferRef& source = program.sources[step.src_begin + k];
      const std::uint8_t* from = locate(source, step.chunk);
      for (std::size_t i = 0; i < size; ++i) {
        const std::uint8_t value = term(source, from[i]);
        folded[i] = k == 0 ? value : combine(folded[i], value);
      }
    }
    std::uint8_t* to = locate(step.dst, step.chunk);
    for (std::size_t i = 0; i < size; ++i) to[i] = folded[i];
    return true;
  }

  const Plan& plan_;
  DataType dtype_;
  ReduceOp op_;
  std::size_t count_;
  ChunkLayout layout_;
  long double reciprocal_;
  std::vector<Bytes> inputs_;
  std::vector<Bytes> outputs_;
  std::vector<Bytes> scratch_;
  std::vector<std::uint32_t> counters_;
};

// Several chunks in every plan, and a last chunk shorter than the others.
constexpr std::size_t kFp8PlanFoldCount = 517;
constexpr std::uint64_t kFp8PlanFoldSeed = 0xf8;

class Fp8PlanFoldTest : public ::testing::TestWithParam<Algorithm> {};

TEST_P(Fp8PlanFoldTest, SimulatorBitsEqualAHostFoldInThePlansOrder) {
  for (const int n : {2, 3, 5, 8}) {
    const Plan plan = *buildPlan(PlanRequest{GetParam(), n, false});
    for (const DataType dtype : {DataType::kFloat8E4M3, DataType::kFloat8E5M2}) {
      for (int o = 0; o < kReduceOpCount; ++o) {
        const auto op = static_cast<ReduceOp>(o);
        const std::string where =
            plan.description + ", " + std::string(dataTypeName(dtype)) + " " + std::string(reduceOpName(op));
        const PlanRun run = runPlanOnSim(plan, kFp8PlanFoldCount, dtype, op, kFp8PlanFoldSeed);
        ASSERT_TRUE(run.status.isOk()) << where << ": " << run.status.toString();
        EXPECT_TRUE(run.races.empty()) << where;
        EXPECT_EQ(run.reference_problem, "") << where;
        std::string problem;
        const std::vector<Bytes> folded = HostFold(plan, dtype, op, kFp8PlanFoldCount).run(run.inputs, problem);
        ASSERT_EQ(problem, "") << where;
        for (std::size_t r = 0; r < folded.size(); ++r) {
          const Bytes simulated(run.outputs[r].begin(), run.outputs[r].end());
          ASSERT_EQ(simulated, folded[r]) << where << ": rank " << r;
        }
      }
    }
  }
}

// Nothing above is vacuous: with more than two ranks some element of an fp8 sum differs between two fold
// orders (each step rounds), so the host fold pins the plan's order, not just the set of inputs.
TEST(Fp8PlanFold, TwoAlgorithmsFoldingInOtherOrdersGiveOtherBits) {
  constexpr int kRanks = 8;
  const Plan ring = *buildPlan(PlanRequest{Algorithm::kRing, kRanks, false});
  const Plan doubling = *buildPlan(PlanRequest{Algorithm::kRecursiveDoubling, kRanks, false});
  const PlanRun a = runPlanOnSim(ring, kFp8PlanFoldCount, DataType::kFloat8E4M3, ReduceOp::kSum, kFp8PlanFoldSeed);
  const PlanRun b = runPlanOnSim(doubling, kFp8PlanFoldCount, DataType::kFloat8E4M3, ReduceOp::kSum, kFp8PlanFoldSeed);
  ASSERT_TRUE(a.status.isOk() && b.status.isOk());
  ASSERT_EQ(a.inputs, b.inputs);
  EXPECT_NE(a.outputs[0], b.outputs[0]);
}

INSTANTIATE_TEST_SUITE_P(EveryAlgorithm, Fp8PlanFoldTest,
                         ::testing::Values(Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing,
                                           Algorithm::kRecursiveDoubling, Algorithm::kRabenseifner, Algorithm::kTree,
                                           Algorithm::kCopyEngineTwoShot),
                         [](const ::testing::TestParamInfo<Algorithm>& param) {
                           std::string name(algorithmName(param.param));
                           for (auto& ch : name) ch = ch == '-' ? '_' : ch;
                           return name;
                         });

}  // namespace
}  // namespace peerreduce::testing
