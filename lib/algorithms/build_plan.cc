#include <string>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"
#include "util/hash.h"

namespace peerreduce {

StatusOr<Plan> buildPlan(const PlanRequest& request) {
  if (request.world_size < 1 || request.world_size > kMaxWorldSize) {
    return invalidArgumentError("cannot plan for world size " + std::to_string(request.world_size) +
                                "; supported sizes are 1.." + std::to_string(kMaxWorldSize));
  }
  if (request.collective != Collective::kAllReduce) return buildCollectivePlan(request);
  if (request.world_size == 1 && request.algorithm != Algorithm::kAuto && request.algorithm != Algorithm::kUser &&
      isValidAlgorithm(request.algorithm)) {
    return buildSingleRankPlan(request.algorithm, request.in_place);
  }
  switch (request.algorithm) {
    case Algorithm::kOneShot:
      return buildOneShotPlan(request.world_size, request.in_place);
    case Algorithm::kTwoShot:
      return buildTwoShotPlan(request.world_size, request.in_place);
    case Algorithm::kRing: {
      if (request.ring_order.empty()) return buildRingPlan(request.world_size, request.in_place);
      PR_RETURN_IF_ERROR(checkPermutation(request.ring_order, request.world_size));
      return buildRingPlanOver(request.ring_order, request.in_place);
    }
    case Algorithm::kRecursiveDoubling:
      return buildRecursiveDoublingPlan(request.world_size, request.in_place);
    case Algorithm::kRabenseifner:
      return buildRabenseifnerPlan(request.world_size, request.in_place);
    case Algorithm::kCopyEngineTwoShot:
      return buildCopyEngineTwoShotPlan(request.world_size, request.in_place, request.reduce_from_private);
    case Algorithm::kTree: {
      if (request.pipeline < 1 || request.pipeline > kMaxTreePipeline) {
        return invalidArgumentError("tree pipeline of " + std::to_string(request.pipeline) + " chunks; supported 1.." +
                                    std::to_string(kMaxTreePipeline));
      }
      SpanningTree tree;
      if (request.tree_parent.empty()) {
        // Without a topology, the tree of a full mesh: a star around rank 0.
        PR_ASSIGN_OR_RETURN(tree, shallowestSpanningTree(Topology::fullMesh(request.world_size)));
      } else {
        PR_ASSIGN_OR_RETURN(tree, treeFromParents(request.tree_parent));
      }
      return buildTreePlan(tree, request.pipeline, request.in_place);
    }
    case Algorithm::kAuto:
      return invalidArgumentError("buildPlan needs a concrete algorithm; 'auto' is resolved by the selector first");
    case Algorithm::kUser:
      return invalidArgumentError("a user plan is read from its file (plan/plan_text.h), not built");
  }
  return invalidArgumentError("unknown algorithm value " + std::to_string(static_cast<int>(request.algorithm)));
}

Status checkPermutation(const std::vector<int>& order, int world_size) {
  if (static_cast<int>(order.size()) != world_size) {
    return invalidArgumentError("ring order lists " + std::to_string(order.size()) + " ranks for a world of " +
                                std::to_string(world_size));
  }
  std::vector<bool> seen(static_cast<std::size_t>(world_size), false);
  for (int r : order) {
    if (r < 0 || r >= world_size || seen[static_cast<std::size_t>(r)]) {
      return invalidArgumentError("ring order is not a permutation of 0.." + std::to_string(world_size - 1) +
                                  " (rank " + std::to_string(r) + ")");
    }
    seen[static_cast<std::size_t>(r)] = true;
  }
  return Status::ok();
}

std::uint64_t PlanRequest::fingerprint() const {
  Fnv1a hash;
  hash.add(static_cast<int>(algorithm));
  hash.add(world_size);
  hash.add(in_place);
  hash.add(pipeline);
  hash.add(ring_order.size());
  for (int r : ring_order) hash.add(r);
  hash.add(tree_parent.size());
  for (int p : tree_parent) hash.add(p);
  hash.add(static_cast<int>(collective));
  hash.add(root);
  if (reduce_from_private) hash.add(1);  // only when set, so every other request keeps its key
  return hash.value();
}

Plan buildSingleRankPlan(Algorithm algorithm, bool in_place, Collective collective) {
  PlanBuilder b(algorithm, 1, 1, kFirstAlgorithmFlag, in_place, collective);
  const BufferRef source = inputOf(0);
  if (collective == Collective::kAllReduce || collective == Collective::kReduceScatter) {
    b.reduce(0, 0, std::span<const BufferRef>(&source, 1), outputOf(0), true);
  } else {
    b.copy(0, 0, source, outputOf(0));
  }
  const std::string what =
      collective == Collective::kAllReduce ? "" : std::string(collectiveName(collective)) + " of a ";
  return b.finish(what + "single rank: output = input");
}

PowerOfTwoFold::PowerOfTwoFold(int n) : world_size(n) {
  while (active * 2 <= n) active *= 2;
  extra = n - active;
}

int PowerOfTwoFold::virtualRank(int rank) const {
  if (rank < 2 * extra) return rank % 2 == 0 ? rank / 2 : -1;
  return rank - extra;
}

int PowerOfTwoFold::rankOfVirtual(int vrank) const { return vrank < extra ? 2 * vrank : vrank + extra; }

int PowerOfTwoFold::foldPartner(int rank) const {
  if (rank >= 2 * extra) return -1;
  return rank % 2 == 0 ? rank + 1 : rank - 1;
}

}  // namespace peerreduce
