#include "plan_codec.h"

#include <cstdint>

#include "algorithms/algorithms.h"

namespace peerreduce::fuzz {
namespace {

// Small worlds and plans: the verifier's logic is the same at 4 ranks as at 64, and small plans keep
// each execution fast enough for thousands of runs a second.
constexpr int kMaxRawWorld = 4;
constexpr int kMaxRawSteps = 24;
constexpr int kMaxRawSources = 16;

// A value in [-1, limit]: one below and one above the valid range 0..limit-1.
std::int32_t nearRange(FuzzInput& input, int limit) { return input.intIn(-1, limit); }

BufferRef decodeRef(FuzzInput& input, const Plan& plan) {
  BufferRef ref;
  ref.rank = nearRange(input, plan.world_size);
  ref.kind = static_cast<BufferKind>(input.byte() % 4);  // 3 is not a BufferKind
  ref.slot = nearRange(input, plan.scratch_slots);
  return ref;
}

Step decodeStep(FuzzInput& input, const Plan& plan, std::size_t sources) {
  Step step;
  const std::uint8_t bits = input.byte();
  step.kind = static_cast<StepKind>(bits % 5);  // 4 is not a StepKind
  step.finalize = (bits & 0x80) != 0;
  step.copy_engine = (bits & 0x40) != 0;
  step.chunk = nearRange(input, plan.num_chunks);
  step.dst = decodeRef(input, plan);
  step.src_begin = static_cast<std::uint32_t>(input.byte() % (sources + 2));
  step.src_count = static_cast<std::uint32_t>(input.byte() % 5);
  step.peer = nearRange(input, plan.world_size);
  step.flag = nearRange(input, plan.num_flags);
  step.value = static_cast<std::uint32_t>(input.byte() % 5);
  return step;
}

}  // namespace

void refreshSignalCounts(Plan& plan) {
  for (const RankProgram& program : plan.programs) {
    for (const Step& step : program.steps) {
      if (step.kind != StepKind::kSignal) continue;
      if (step.peer < 0 || step.peer >= plan.world_size || step.flag < 0 || step.flag >= plan.num_flags) return;
    }
  }
  if (plan.world_size < 1 || plan.num_flags < 1 || plan.programs.size() != static_cast<std::size_t>(plan.world_size)) {
    return;
  }
  plan.signal_counts = signalCounts(plan);
}

Plan decodeRawPlan(FuzzInput& input) {
  Plan plan;
  plan.algorithm = static_cast<Algorithm>(input.byte() % kBuiltAlgorithmCount);
  plan.world_size = input.intIn(1, kMaxRawWorld);
  plan.num_chunks = input.intIn(1, 4);
  plan.scratch_slots = input.intIn(0, 8);
  plan.num_flags = input.intIn(1, 4);
  const std::uint8_t bits = input.byte();
  plan.in_place = (bits & 1) != 0;
  // Another world size than programs.size() is itself a malformed plan to reject.
  const int programs = (bits & 2) != 0 ? plan.world_size + ((bits & 4) != 0 ? 1 : -1) : plan.world_size;
  for (int r = 0; r < programs; ++r) {
    RankProgram program;
    const int sources = input.byte() % (kMaxRawSources + 1);
    for (int i = 0; i < sources; ++i) program.sources.push_back(decodeRef(input, plan));
    const int steps = input.byte() % (kMaxRawSteps + 1);
    for (int i = 0; i < steps; ++i) program.steps.push_back(decodeStep(input, plan, program.sources.size()));
    plan.programs.push_back(std::move(program));
  }
  if ((bits & 8) == 0) refreshSignalCounts(plan);
  return plan;
}

bool mutateBuiltPlan(FuzzInput& input, Plan& plan) {
  const auto algorithm = static_cast<Algorithm>(input.intIn(1, kBuiltAlgorithmCount - 1));
  const int world = input.intIn(1, 6);
  const bool in_place = input.byte() % 2 == 1;
  auto built = buildPlan(PlanRequest(algorithm, world, in_place));
  if (!built.isOk()) return false;
  plan = std::move(built).value();
  const int mutations = input.byte() % 4;
  for (int m = 0; m < mutations; ++m) {
    RankProgram& program = plan.programs[input.byte() % plan.programs.size()];
    const std::uint8_t field = input.byte();
    if (field % 8 == 7 || program.steps.empty()) {  // drop a source or append one
      if (!program.sources.empty() && input.byte() % 2 == 0) {
        program.sources.pop_back();
      } else {
        program.sources.push_back(decodeRef(input, plan));
      }
      continue;
    }
    const std::size_t index = input.byte() % program.steps.size();
    Step& step = program.steps[index];
    switch (field % 8) {
      case 0:
        step = decodeStep(input, plan, program.sources.size());
        break;
      case 1:
        step.chunk = nearRange(input, plan.num_chunks);
        break;
      case 2:
        step.dst = decodeRef(input, plan);
        break;
      case 3:
        step.peer = nearRange(input, plan.world_size);
        break;
      case 4:
        step.value = static_cast<std::uint32_t>(input.byte() % 6);
        break;
      case 5:
        program.steps.erase(program.steps.begin() + static_cast<std::ptrdiff_t>(index));
        break;
      case 6: {  // swap with the next step: reorders a signal past a write, a wait past a read
        if (index + 1 < program.steps.size()) std::swap(program.steps[index], program.steps[index + 1]);
        break;
      }
      default:
        break;
    }
  }
  if (input.byte() % 4 != 0) refreshSignalCounts(plan);
  return true;
}

}  // namespace peerreduce::fuzz
