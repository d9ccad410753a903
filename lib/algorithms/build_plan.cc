#include <string>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {

StatusOr<Plan> buildPlan(const PlanRequest& request) {
  if (request.world_size < 1 || request.world_size > kMaxWorldSize) {
    return invalidArgumentError("cannot plan for world size " + std::to_string(request.world_size) +
                                "; supported sizes are 1.." + std::to_string(kMaxWorldSize));
  }
  if (request.world_size == 1 && request.algorithm != Algorithm::kAuto && isValidAlgorithm(request.algorithm)) {
    return buildSingleRankPlan(request.algorithm, request.in_place);
  }
  switch (request.algorithm) {
    case Algorithm::kOneShot: return buildOneShotPlan(request.world_size, request.in_place);
    case Algorithm::kTwoShot: return buildTwoShotPlan(request.world_size, request.in_place);
    case Algorithm::kRing: return buildRingPlan(request.world_size, request.in_place);
    case Algorithm::kRecursiveDoubling: return buildRecursiveDoublingPlan(request.world_size, request.in_place);
    case Algorithm::kRabenseifner: return buildRabenseifnerPlan(request.world_size, request.in_place);
    case Algorithm::kTree: {
      // Without a topology, the tree of a full mesh: a star around rank 0.
      PR_ASSIGN_OR_RETURN(SpanningTree tree, shallowestSpanningTree(Topology::fullMesh(request.world_size)));
      return buildTreePlan(tree, 1, request.in_place);
    }
    case Algorithm::kAuto:
      return invalidArgumentError("buildPlan needs a concrete algorithm; 'auto' is resolved by the selector first");
  }
  return invalidArgumentError("unknown algorithm value " + std::to_string(static_cast<int>(request.algorithm)));
}

Plan buildSingleRankPlan(Algorithm algorithm, bool in_place) {
  PlanBuilder b(algorithm, 1, 1, kFirstAlgorithmFlag, in_place);
  const BufferRef source = inputOf(0);
  b.reduce(0, 0, std::span<const BufferRef>(&source, 1), outputOf(0), true);
  return b.finish("single rank: output = input");
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
