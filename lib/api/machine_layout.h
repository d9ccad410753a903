// The machine layout of a world (peerreduce/multi_machine.h): host identities gathered through the
// world's bootstrap, checked, and turned into machine and local-rank indices the same on every rank.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "peerreduce/multi_machine.h"
#include "peerreduce/status.h"

namespace peerreduce {

// The layout of ranks whose host identities are `identity_of_rank` (by world rank), seen from `rank`.
// kUnsupported when machines hold different numbers of ranks, naming every machine and its count
// (local rank i of every machine forms one network world, so each machine needs every local rank).
StatusOr<MachineLayout> machineLayoutOf(const std::vector<std::string>& identity_of_rank, int rank);

// Collective over `bootstrap`: every rank contributes `identity`; every rank gets the same layout (or
// the same error).
StatusOr<MachineLayout> gatherMachineLayout(Bootstrap& bootstrap, const std::string& identity,
                                            std::chrono::milliseconds timeout);

}  // namespace peerreduce
