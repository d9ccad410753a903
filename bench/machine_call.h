// One collective call on a communicator that spans machines (peerreduce/multi_machine.h), chosen by value:
// what `peerreduce-bench --machines` times, and what its unit test runs on the simulator's machines (no
// GPU code, so both builds share it).
#pragma once

#include <cstddef>

#include "peerreduce/multi_machine.h"

namespace peerreduce::bench {

// `count` as callCollective's (collective_call.h); reductions sum; `root` is read by broadcast only, and
// `strategy` by the three that have strategies (broadcast has one way between machines).
Status callMachineCollective(MultiMachineCommunicator& comm, Collective collective, int root, MachineStrategy strategy,
                             const void* send, void* recv, std::size_t count, DataType dtype, StreamHandle stream);

}  // namespace peerreduce::bench
