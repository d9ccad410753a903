#include "algorithms/collective_routes.h"

#include "algorithms/algorithms.h"
#include "algorithms/candidates.h"
#include "topology/routes.h"

namespace peerreduce {

std::vector<CollectiveTree> collectiveTrees(Collective collective, int root, const Topology& topology, bool mesh) {
  const int n = topology.worldSize();
  const bool broadcast = collective == Collective::kBroadcast;
  std::vector<int> parent;
  if (mesh) {
    parent = binomialTreeParents(n, broadcast ? root : 0);
  } else {
    auto tree = broadcast ? spanningTreeRootedAt(topology, root) : shallowestSpanningTree(topology);
    if (!tree.isOk()) return {};
    parent = tree->parent;
  }
  if (!broadcast) return {CollectiveTree{parent, 1}};
  return {CollectiveTree{parent, 1}, CollectiveTree{parent, kTreePipelinedChunks}};
}

}  // namespace peerreduce
