// runOnRankThreads: runs one task per rank concurrently and waits for all of them.
//
// Collective steps (communicator creation) need every rank on its own thread at once. Creating and
// joining a thread per rank per world dominated the fault campaign (thousands of small worlds), so
// the threads are kept: each calling thread owns a set of helper threads, grown on demand, reused by
// its later calls and joined when the calling thread exits. Rank 0 runs on the calling thread.
//
// The wait for the tasks has no deadline of its own: each task is bounded by its own deadlines (the
// bootstrap's timeouts), as with joining the threads before.
#pragma once

#include <functional>

namespace peerreduce::sim {

// Calls task(r) for every r in [0, ranks), each on a different thread; returns when all returned.
// `task` must not throw. ranks in 1..64.
void runOnRankThreads(int ranks, const std::function<void(int)>& task);

}  // namespace peerreduce::sim
