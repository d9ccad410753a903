// PlanCost: the predicted time of a plan on a topology, by walking its happens-before graph.
//
// Each rank starts at the launch overhead and runs its steps in order; a step starts when the rank's
// previous step ended and, for a wait, when the awaited signal became visible. Step costs come from
// TimingModel / PhaseTimer. The prediction is the time the last rank finishes. Deterministic and
// independent of the element values.
#pragma once

#include <cstdint>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/status.h"
#include "peerreduce/topology.h"
#include "select/timing_model.h"

namespace peerreduce {

struct PlanCost {
  double time_us = 0.0;                   // when the last rank finishes
  std::vector<double> rank_finish_us;     // per rank
  std::vector<std::uint64_t> link_bytes;  // n x n: bytes rank `from` moved in rank `to`'s memory ([from*n+to])
  std::size_t steps = 0;                  // steps executed, all ranks
};

// Evaluates many plans on one topology, reusing its buffers (the selector evaluates hundreds).
class PlanCostEvaluator {
 public:
  explicit PlanCostEvaluator(const Topology& topology);
  // kInternal if the plan deadlocks (the verifier reports why in detail).
  StatusOr<PlanCost> evaluate(const Plan& plan, const ChunkLayout& layout, std::size_t elem_size);

 private:
  const Topology& topology_;
  TimingModel timing_;
  std::vector<PhaseTimer> phases_;
  std::vector<std::size_t> first_arrival_;  // per counter: index of its first signal in arrivals_
  std::vector<std::size_t> arrived_;        // per counter: signals so far
  std::vector<double> arrivals_;            // visibility time of every signal, grouped by counter
  std::vector<std::size_t> pc_;
};

StatusOr<PlanCost> estimatePlanCost(const Plan& plan, const ChunkLayout& layout, std::size_t elem_size,
                                    const Topology& topology);

}  // namespace peerreduce
