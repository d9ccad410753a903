// One collective call through peerreduce's public API, chosen by value: what peerreduce-bench times for
// --coll, and what its unit test runs on the simulator (no GPU code, so both builds share it).
#pragma once

#include <cstddef>

#include "peerreduce/communicator.h"

namespace peerreduce::bench {

// `count` is the API's count (allreduce and broadcast: count; reduce-scatter: recvcount; all-gather:
// sendcount); reductions sum; `root` is read by broadcast only.
Status callCollective(Communicator& comm, Collective collective, int root, const void* send, void* recv,
                      std::size_t count, DataType dtype, StreamHandle stream);

}  // namespace peerreduce::bench
