#include "select/plan_cost.h"

#include <algorithm>
#include <string>

#include "plan/flag_epochs.h"
#include "select/timing_model.h"

namespace peerreduce {

StatusOr<PlanCost> estimatePlanCost(const Plan& plan, const ChunkLayout& layout, std::size_t elem_size,
                                    const Topology& topology) {
  const int n = plan.world_size;
  if (topology.worldSize() != n) {
    return invalidArgumentError("topology has " + std::to_string(topology.worldSize()) + " ranks, plan " +
                                std::to_string(n));
  }
  const TimingModel timing(topology);
  const auto un = static_cast<std::size_t>(n);
  PlanCost cost;
  cost.rank_finish_us.assign(un, 0.0);
  cost.link_bytes.assign(un * un, 0);
  // Visibility time of each signal, per counter (holder, writer, flag).
  std::vector<std::vector<double>> arrivals(un * un * kMaxFlags);
  auto counter = [&](int holder, int writer, int flag) {
    return (static_cast<std::size_t>(holder) * un + static_cast<std::size_t>(writer)) * kMaxFlags +
           static_cast<std::size_t>(flag);
  };
  std::vector<std::size_t> pc(un, 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (std::size_t r = 0; r < un; ++r) {
      const RankProgram& program = plan.programs[r];
      double& clock = cost.rank_finish_us[r];
      while (pc[r] < program.steps.size()) {
        const Step& step = program.steps[pc[r]];
        const int rank = static_cast<int>(r);
        if (step.kind == StepKind::kWait) {
          const auto& sent = arrivals[counter(rank, step.peer, step.flag)];
          if (sent.size() < step.value) break;
          clock = std::max(clock, sent[step.value - 1]);
        } else if (step.kind == StepKind::kSignal) {
          clock += timing.signalIssueUs();
          arrivals[counter(step.peer, rank, step.flag)].push_back(clock + timing.signalLatencyUs(rank, step.peer));
        } else {
          clock += timing.dataStepUs(rank, program, step, layout, elem_size, &cost.link_bytes);
        }
        ++pc[r];
        ++cost.steps;
        progress = true;
      }
    }
  }
  for (std::size_t r = 0; r < un; ++r) {
    if (pc[r] < plan.programs[r].steps.size()) {
      return internalError("plan '" + plan.description + "' deadlocks at rank " + std::to_string(r) + " step #" +
                           std::to_string(pc[r]) + "; run the verifier for details");
    }
  }
  cost.time_us = *std::max_element(cost.rank_finish_us.begin(), cost.rank_finish_us.end());
  return cost;
}

}  // namespace peerreduce
