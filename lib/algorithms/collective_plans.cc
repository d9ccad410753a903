// buildPlan for the collectives other than allreduce: checks the request and picks the builder.
#include <string>

#include "algorithms/algorithms.h"
#include "algorithms/ring_order.h"
#include "core/collective_algorithms.h"

namespace peerreduce {
namespace {

// The tree plans: the request's tree (the binomial tree rooted at `root` when none is given).
StatusOr<Plan> buildCollectiveTreePlan(const PlanRequest& request) {
  const int n = request.world_size;
  const bool broadcast = request.collective == Collective::kBroadcast;
  const std::string what(collectiveName(request.collective));
  if (broadcast ? request.pipeline < 1 || request.pipeline > kMaxTreePipeline : request.pipeline != 1) {
    return invalidArgumentError(what + " tree pipeline of " + std::to_string(request.pipeline) + " chunks; " +
                                (broadcast ? "supported 1.." + std::to_string(kMaxTreePipeline)
                                           : std::string("only broadcast pipelines (pass 1)")));
  }
  const std::vector<int> parents =
      request.tree_parent.empty() ? binomialTreeParents(n, request.root) : request.tree_parent;
  if (static_cast<int>(parents.size()) != n) {
    return invalidArgumentError(what + " tree lists " + std::to_string(parents.size()) + " parents for a world of " +
                                std::to_string(n));
  }
  PR_ASSIGN_OR_RETURN(SpanningTree tree, treeFromParents(parents));
  if (broadcast && tree.root != request.root) {
    return invalidArgumentError("broadcast from " + std::to_string(request.root) + " over a tree rooted at " +
                                std::to_string(tree.root) + " (a broadcast tree is rooted at its root)");
  }
  switch (request.collective) {
    case Collective::kReduceScatter:
      return buildReduceScatterTreePlan(tree, request.in_place);
    case Collective::kAllGather:
      return buildAllGatherTreePlan(tree, request.in_place);
    case Collective::kBroadcast:
      return buildBroadcastTreePlan(tree, request.pipeline, request.in_place);
    case Collective::kAllReduce:
      break;
  }
  return invalidArgumentError("buildCollectiveTreePlan is for the collectives other than allreduce");
}

}  // namespace

std::string_view collectiveAlgorithmList(Collective collective) {
  switch (collective) {
    case Collective::kBroadcast:
      return "one-shot (direct), two-shot, ring, tree and copy-engine-two-shot";
    case Collective::kAllGather:
      return "one-shot (direct), ring, recursive-doubling, tree and copy-engine-two-shot";
    default:
      return "one-shot (direct), ring, recursive-doubling, tree and copy-engine-two-shot";
  }
}

StatusOr<Plan> buildCollectivePlan(const PlanRequest& request) {
  const int n = request.world_size;
  const std::string what(collectiveName(request.collective));
  if (!isValidCollective(request.collective)) {
    return invalidArgumentError("unknown collective value " + std::to_string(static_cast<int>(request.collective)));
  }
  const bool broadcast = request.collective == Collective::kBroadcast;
  if (broadcast ? (request.root < 0 || request.root >= n) : request.root != 0) {
    return invalidArgumentError(what + " root " + std::to_string(request.root) + " is not a rank of a world of " +
                                std::to_string(n) + (broadcast ? "" : " (only broadcast has a root; pass 0)"));
  }
  if (!collectiveHasAlgorithm(request.collective, request.algorithm)) {
    return invalidArgumentError(what + " has " + std::string(collectiveAlgorithmList(request.collective)) +
                                " plans, not " + std::string(algorithmName(request.algorithm)));
  }
  if (request.algorithm == Algorithm::kTree) return buildCollectiveTreePlan(request);
  if (request.algorithm == Algorithm::kCopyEngineTwoShot) {
    switch (request.collective) {
      case Collective::kAllGather:
        return buildAllGatherCopyEnginePlan(n, request.in_place);
      case Collective::kReduceScatter:
        return buildReduceScatterCopyEnginePlan(n, request.in_place);
      default:
        return buildBroadcastCopyEnginePlan(n, request.root, request.in_place);
    }
  }
  if (request.algorithm == Algorithm::kTwoShot) {
    if (request.pipeline < 1 || request.pipeline > kMaxBroadcastTwoShotStages) {
      return invalidArgumentError("broadcast two-shot in " + std::to_string(request.pipeline) +
                                  " stages; supported 1.." + std::to_string(kMaxBroadcastTwoShotStages));
    }
    return buildBroadcastTwoShotPlan(n, request.root, request.pipeline, request.in_place);
  }
  if (n == 1) return buildSingleRankPlan(request.algorithm, request.in_place, request.collective);
  std::vector<int> order = request.ring_order;
  if (order.empty()) {
    order.resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) order[static_cast<std::size_t>(r)] = r;
  }
  PR_RETURN_IF_ERROR(checkPermutation(order, n));
  const bool ring = request.algorithm == Algorithm::kRing;
  if (request.algorithm == Algorithm::kRecursiveDoubling) {
    return request.collective == Collective::kReduceScatter ? buildReduceScatterHalvingPlan(n, request.in_place)
                                                            : buildAllGatherDoublingPlan(n, request.in_place);
  }
  switch (request.collective) {
    case Collective::kReduceScatter:
      return ring ? buildReduceScatterRingPlan(order, request.in_place)
                  : buildReduceScatterDirectPlan(n, request.in_place);
    case Collective::kAllGather:
      return ring ? buildAllGatherRingPlan(order, request.in_place) : buildAllGatherDirectPlan(n, request.in_place);
    case Collective::kBroadcast:
      return ring ? buildBroadcastRingPlan(order, request.root, request.in_place)
                  : buildBroadcastDirectPlan(n, request.root, request.in_place);
    case Collective::kAllReduce:
      break;
  }
  return invalidArgumentError("buildCollectivePlan is for the collectives other than allreduce");
}

}  // namespace peerreduce
