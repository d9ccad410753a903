// PlanCost: the predicted time of a plan on a topology, by walking its happens-before graph.
//
// Each rank runs its steps in order; a step starts when the rank's previous step ended and, for a
// wait, when the awaited signal became visible. Step costs come from TimingModel. The prediction is
// the time the last rank finishes. Deterministic and independent of the element values.
#pragma once

#include <cstdint>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/status.h"
#include "peerreduce/topology.h"

namespace peerreduce {

struct PlanCost {
  double time_us = 0.0;                  // when the last rank finishes
  std::vector<double> rank_finish_us;    // per rank
  std::vector<std::uint64_t> link_bytes; // n x n: bytes rank `from` moved to/from rank `to` ([from*n+to])
  std::size_t steps = 0;                 // steps executed, all ranks
};

// kInternal if the plan deadlocks (the verifier reports why in detail).
StatusOr<PlanCost> estimatePlanCost(const Plan& plan, const ChunkLayout& layout, std::size_t elem_size,
                                    const Topology& topology);

}  // namespace peerreduce
