// The trees the tree plans of the collectives other than allreduce follow on a topology, and (from
// core/collective_algorithms.h) which algorithms those collectives have; algorithms/candidates.h builds
// the candidates from these.
#pragma once

#include <vector>

#include "core/collective_algorithms.h"  // collectiveHasAlgorithm
#include "peerreduce/topology.h"
#include "peerreduce/types.h"

namespace peerreduce {

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
