#include "plan/plan_builder.h"

#include <algorithm>
#include <cassert>

namespace peerreduce {

PlanBuilder::PlanBuilder(Algorithm algorithm, int world_size, int num_chunks, int num_flags, bool in_place,
                         Collective collective, int root) {
  plan_.collective = collective;
  plan_.algorithm = algorithm;
  plan_.world_size = world_size;
  plan_.num_blocks = blocksOf(collective, world_size);
  plan_.root = root;
  plan_.num_chunks = num_chunks;
  plan_.num_flags = num_flags;
  plan_.in_place = in_place;
  plan_.programs.resize(static_cast<std::size_t>(world_size));
  sent_.assign(
      static_cast<std::size_t>(world_size) * static_cast<std::size_t>(world_size) * static_cast<std::size_t>(num_flags),
      0);
}

std::size_t PlanBuilder::sentIndex(int holder, int writer, int flag) const {
  const auto n = static_cast<std::size_t>(plan_.world_size);
  return (static_cast<std::size_t>(holder) * n + static_cast<std::size_t>(writer)) *
             static_cast<std::size_t>(plan_.num_flags) +
         static_cast<std::size_t>(flag);
}

void PlanBuilder::copy(int rank, int chunk, BufferRef src, BufferRef dst) {
  reduce(rank, chunk, std::span<const BufferRef>(&src, 1), dst, false);
  plan_.programs[static_cast<std::size_t>(rank)].steps.back().kind = StepKind::kCopy;
}

void PlanBuilder::copyEngineCopy(int rank, int chunk, BufferRef src, BufferRef dst) {
  copy(rank, chunk, src, dst);
  plan_.programs[static_cast<std::size_t>(rank)].steps.back().copy_engine = true;
}

void PlanBuilder::reduce(int rank, int chunk, std::span<const BufferRef> sources, BufferRef dst, bool finalize) {
  RankProgram& program = plan_.programs[static_cast<std::size_t>(rank)];
  Step step;
  step.kind = StepKind::kReduce;
  step.finalize = finalize;
  step.chunk = chunk;
  step.dst = dst;
  step.src_begin = static_cast<std::uint32_t>(program.sources.size());
  step.src_count = static_cast<std::uint32_t>(sources.size());
  program.sources.insert(program.sources.end(), sources.begin(), sources.end());
  program.steps.push_back(step);
}

void PlanBuilder::signal(int from, int to, int flag) {
  assert(flag > kDoneFlag && flag < plan_.num_flags && "algorithms signal on their own flags; finish() sends done");
  Step step;
  step.kind = StepKind::kSignal;
  step.peer = to;
  step.flag = flag;
  plan_.programs[static_cast<std::size_t>(from)].steps.push_back(step);
  sent_[sentIndex(to, from, flag)] += 1;
}

void PlanBuilder::waitForAll(int rank, int writer, int flag) {
  const std::uint32_t value = sent_[sentIndex(rank, writer, flag)];
  assert(value > 0 && "waiting for a signal that was never emitted would deadlock");
  Step step;
  step.kind = StepKind::kWait;
  step.peer = writer;
  step.flag = flag;
  step.value = value;
  plan_.programs[static_cast<std::size_t>(rank)].steps.push_back(step);
}

Plan PlanBuilder::finish(std::string description) {
  const int n = plan_.world_size;
  int max_slot = -1;
  for (int rank = 0; rank < n; ++rank) {
    RankProgram& program = plan_.programs[static_cast<std::size_t>(rank)];
    // Index of the last step that touches each peer's memory; -1 if none.
    std::vector<int> last_access(static_cast<std::size_t>(n), -1);
    auto note = [&](const BufferRef& ref, int index) {
      if (ref.kind == BufferKind::kScratch) max_slot = std::max(max_slot, ref.slot);
      if (ref.rank != rank) last_access[static_cast<std::size_t>(ref.rank)] = index;
    };
    for (int i = 0; i < static_cast<int>(program.steps.size()); ++i) {
      const Step& step = program.steps[static_cast<std::size_t>(i)];
      if (step.kind != StepKind::kCopy && step.kind != StepKind::kReduce) continue;
      note(step.dst, i);
      for (std::uint32_t s = 0; s < step.src_count; ++s) note(program.sources[step.src_begin + s], i);
    }
    // A done signal goes after the run of copy/reduce steps that holds the last access: a GPU runs such
    // a run (a phase) with all its blocks at once, so signalling in its middle would split it.
    const int step_count = static_cast<int>(program.steps.size());
    auto isData = [&](int i) {
      const StepKind kind = program.steps[static_cast<std::size_t>(i)].kind;
      return kind == StepKind::kCopy || kind == StepKind::kReduce;
    };
    for (auto& last : last_access) {
      while (last >= 0 && last + 1 < step_count && isData(last + 1)) ++last;
    }
    std::vector<Step> steps;
    steps.reserve(program.steps.size() + static_cast<std::size_t>(n));
    for (int i = 0; i < step_count; ++i) {
      steps.push_back(program.steps[static_cast<std::size_t>(i)]);
      for (int peer = 0; peer < n; ++peer) {
        if (last_access[static_cast<std::size_t>(peer)] != i) continue;
        Step done;
        done.kind = StepKind::kSignal;
        done.peer = peer;
        done.flag = kDoneFlag;
        steps.push_back(done);
      }
    }
    program.steps = std::move(steps);
  }
  plan_.scratch_slots = max_slot + 1;
  if (first_private_ >= 0) plan_.private_slots = std::max(0, plan_.scratch_slots - first_private_);
  plan_.description = std::move(description);
  plan_.signal_counts = signalCounts(plan_);
  return std::move(plan_);
}

}  // namespace peerreduce
