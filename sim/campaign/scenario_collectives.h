// The collectives a campaign operation may be (allreduce, reduce-scatter, all-gather, broadcast): what
// each one's buffers hold, how it is called, and the exact result a rank must hold after it, so that
// runScenario checks every collective as it checks allreduce (guards, send buffer, result).
#pragma once

#include <cstddef>
#include <vector>

#include "peerreduce/communicator.h"
#include "scenario.h"

namespace peerreduce::sim::campaign {

// Each operation's collective and root, drawn from their own stream of the seed (so the rest of the
// draw, and the scenarios made only of allreduces, stay what they were): allreduce half of the time,
// each other collective a sixth.
void drawCollectives(Scenario& scenario);

// Bytes of one rank's send and receive buffers for `op` in a world of `n` ranks.
std::size_t sendBytes(const ScenarioOp& op, int n);
std::size_t recvBytes(const ScenarioOp& op, int n);

// The broadcast's root among the current `n` ranks (the drawn root may have been shrunk away).
int rootIn(const ScenarioOp& op, int n);

// Enqueues `op` on `comm`.
Status submitCollective(Communicator& comm, const ScenarioOp& op, int n, const std::byte* send, std::byte* recv);

// What rank `r` must hold after `op` over `inputs` (one send buffer per rank), given `reduce`, the
// element-wise exact reduction of equally long buffers.
std::vector<std::byte> expectedOutput(const ScenarioOp& op, const std::vector<std::vector<std::byte>>& inputs, int r,
                                      std::vector<std::byte> (*reduce)(const ScenarioOp&, std::size_t,
                                                                       const std::vector<std::vector<std::byte>>&));

}  // namespace peerreduce::sim::campaign
