// peerreduce-sim across simulated machines (--machines M --ranks-per-machine K): run an allreduce on a
// MultiMachineSimWorld and check it, or predict both strategies' times at every size (predict builds
// one machine world and one network world only, so it prices worlds larger than one process can run).
#pragma once

#include "cli/cli_options.h"

namespace peerreduce::sim {

// The process's exit status: 0 verified (or predicted), 1 wrong, 2 bad input.
int multiMachineMain(const CliOptions& options);

}  // namespace peerreduce::sim
