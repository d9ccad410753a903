// buildPlan for the collectives other than allreduce: checks the request and picks the builder.
#include <string>

#include "algorithms/algorithms.h"
#include "algorithms/ring_order.h"

namespace peerreduce {

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
  if (request.algorithm != Algorithm::kOneShot && request.algorithm != Algorithm::kRing) {
    return invalidArgumentError(what + " has one-shot (direct) and ring plans, not " +
                                std::string(algorithmName(request.algorithm)));
  }
  if (n == 1) return buildSingleRankPlan(request.algorithm, request.in_place, request.collective);
  std::vector<int> order = request.ring_order;
  if (order.empty()) {
    order.resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) order[static_cast<std::size_t>(r)] = r;
  }
  PR_RETURN_IF_ERROR(checkPermutation(order, n));
  const bool ring = request.algorithm == Algorithm::kRing;
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
