// peerreduce-sim plan: plan files (docs/PLANS.md) before they reach a GPU.
//   plan check FILE   the verifier's verdict over the topology's links, each problem naming its lines
//   plan run FILE     the plan on the simulator (race checker, bit-for-bit reference), beside every built-in
//                     algorithm of its collective: the run's report, then predict's table with a column for it
//   plan show         a built-in plan written in the format: a starting point for one's own
#pragma once

#include <string>
#include <vector>

namespace peerreduce::sim {

// Exit status: 0 verified (check) or run and checked (run), 1 refused or wrong, 2 bad input.
int planMain(const std::vector<std::string>& args);

}  // namespace peerreduce::sim
