// Runs a Plan directly on a SimWorld, bypassing the Communicator: for canaries (deliberately broken
// plans the harness must catch) and plan-level properties.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/simulator.h"
#include "reference/reference.h"

namespace peerreduce::testing {

struct PlanRun {
  Status status;                                    // of the simulation (timeouts, errors)
  std::vector<std::string> races;                   // happens-before reports
  std::vector<std::vector<unsigned char>> inputs;   // per rank
  std::vector<std::vector<unsigned char>> outputs;  // per rank
  std::string reference_problem;                    // "" when every rank's output matches the reference
  sim::SimStats stats;
};

// `topology`: the simulated machine; world size 0 (the default) is the simulator's default full mesh.
// `payload`: what the float inputs look like (reference/reference.h).
PlanRun runPlanOnSim(const Plan& plan, std::size_t count, DataType dtype, ReduceOp op, std::uint64_t seed,
                     int repetitions = 1, const Topology& topology = Topology(), Payload payload = Payload::kTypical);

}  // namespace peerreduce::testing
