// Which algorithms the collectives other than allreduce have, and the trees their tree plans follow on a
// topology (algorithms/candidates.h builds the candidates from these).
#pragma once

#include <vector>

#include "peerreduce/topology.h"
#include "peerreduce/types.h"

namespace peerreduce {

// Whether `collective` (not allreduce) has a plan of `algorithm`: one-shot (direct), ring and tree for
// every one; recursive doubling (reduce-scatter: recursive halving) for reduce-scatter and all-gather.
bool collectiveHasAlgorithm(Collective collective, Algorithm algorithm);

struct CollectiveTree {
  std::vector<int> parent;  // -1 for the root
  int pipeline = 1;         // chunks a broadcast moves in (1 for the others)
};

// The trees a collective's tree candidates follow. On a full mesh (`mesh`): broadcast's binomial tree
// from its root in 1 and kTreePipelinedChunks chunks; reduce-scatter's and all-gather's binomial tree
// rooted at 0. Otherwise (relays): broadcast's breadth-first tree from its root over the usable links, in
// the same two pipelines; the others' shallowest spanning tree. Empty when the links connect no tree
// (creation refuses such a world before).
std::vector<CollectiveTree> collectiveTrees(Collective collective, int root, const Topology& topology, bool mesh);

}  // namespace peerreduce
