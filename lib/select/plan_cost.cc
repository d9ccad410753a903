#include "select/plan_cost.h"

#include <algorithm>
#include <string>

namespace peerreduce {

PlanCostEvaluator::PlanCostEvaluator(const Topology& topology) : topology_(topology), timing_(topology) {
  for (int r = 0; r < topology.worldSize(); ++r) phases_.emplace_back(timing_, r);
}

StatusOr<PlanCost> PlanCostEvaluator::evaluate(const Plan& plan, const ChunkLayout& layout, std::size_t elem_size) {
  const int n = plan.world_size;
  if (topology_.worldSize() != n) {
    return invalidArgumentError("topology has " + std::to_string(topology_.worldSize()) + " ranks, plan " +
                                std::to_string(n));
  }
  const auto un = static_cast<std::size_t>(n);
  if (plan.signal_counts.size() != un * un * static_cast<std::size_t>(plan.num_flags)) {
    return invalidArgumentError("plan '" + plan.description + "' has no signal counts; build it with PlanBuilder");
  }
  PlanCost cost;
  cost.rank_finish_us.assign(un, timing_.launchUs());
  cost.link_bytes.assign(un * un, 0);
  // Counters are indexed like plan.signal_counts: (holder * n + writer) * num_flags + flag.
  const std::size_t counters = plan.signal_counts.size();
  first_arrival_.assign(counters, 0);
  arrived_.assign(counters, 0);
  std::size_t total = 0;
  for (std::size_t i = 0; i < counters; ++i) {
    first_arrival_[i] = total;
    total += plan.signal_counts[i];
  }
  arrivals_.assign(total, 0.0);
  auto counter = [&](int holder, int writer, int flag) {
    return (static_cast<std::size_t>(holder) * un + static_cast<std::size_t>(writer)) *
               static_cast<std::size_t>(plan.num_flags) +
           static_cast<std::size_t>(flag);
  };
  pc_.assign(un, 0);
  for (auto& phase : phases_) phase.close();
  bool progress = true;
  while (progress) {
    progress = false;
    for (std::size_t r = 0; r < un; ++r) {
      const RankProgram& program = plan.programs[r];
      double& clock = cost.rank_finish_us[r];
      PhaseTimer& phase = phases_[r];
      while (pc_[r] < program.steps.size()) {
        const Step& step = program.steps[pc_[r]];
        const int rank = static_cast<int>(r);
        if (step.kind == StepKind::kWait) {
          const std::size_t c = counter(rank, step.peer, step.flag);
          if (arrived_[c] < step.value) break;
          clock = std::max(clock, arrivals_[first_arrival_[c] + step.value - 1]);
          phase.close();
        } else if (step.kind == StepKind::kSignal) {
          phase.close();
          clock += timing_.signalIssueUs();
          const std::size_t c = counter(step.peer, rank, step.flag);
          arrivals_[first_arrival_[c] + arrived_[c]++] = clock + timing_.signalLatencyUs(rank, step.peer);
        } else {
          clock = phase.addDataStep(program, step, layout, elem_size, clock, &cost.link_bytes);
        }
        ++pc_[r];
        ++cost.steps;
        progress = true;
      }
    }
  }
  for (std::size_t r = 0; r < un; ++r) {
    if (pc_[r] < plan.programs[r].steps.size()) {
      return internalError("plan '" + plan.description + "' deadlocks at rank " + std::to_string(r) + " step #" +
                           std::to_string(pc_[r]) + "; run the verifier for details");
    }
  }
  cost.time_us = *std::max_element(cost.rank_finish_us.begin(), cost.rank_finish_us.end());
  return cost;
}

StatusOr<PlanCost> estimatePlanCost(const Plan& plan, const ChunkLayout& layout, std::size_t elem_size,
                                    const Topology& topology) {
  PlanCostEvaluator evaluator(topology);
  return evaluator.evaluate(plan, layout, elem_size);
}

}  // namespace peerreduce
