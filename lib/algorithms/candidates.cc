#include "algorithms/candidates.h"

#include "algorithms/algorithms.h"
#include "algorithms/collective_routes.h"
#include "algorithms/plan_cache.h"
#include "topology/routes.h"

namespace peerreduce {
namespace {

bool fullMesh(const Topology& topology) {
  for (int a = 0; a < topology.worldSize(); ++a) {
    for (int b = 0; b < topology.worldSize(); ++b) {
      if (!usablePair(topology, a, b)) return false;
    }
  }
  return true;
}

// Whether some pair is host-staged: its ranks' scratch is then pinned host memory (lib/gpu/host_staging.h).
bool anyHostStagedLink(const Topology& topology) {
  for (int a = 0; a < topology.worldSize(); ++a) {
    for (int b = 0; b < topology.worldSize(); ++b) {
      if (a != b && topology.link(a, b).link_class == LinkClass::kHostStaged) return true;
    }
  }
  return false;
}

// Builds and verifies both placements of `request`; a plan that needs a missing link is reported in
// `excluded` instead (any other verification problem is a bug and fails creation).
Status addCandidate(PlanRequest request, const std::vector<std::vector<bool>>& link, bool verify_in_place,
                    CandidateSet& set) {
  Candidate candidate;
  candidate.algorithm = request.algorithm;
  for (int in_place = 0; in_place < 2; ++in_place) {
    request.in_place = in_place == 1;
    // The out-of-place plan is always verified against the links: that is how a plan that needs a
    // missing link is found. The in-place variant only when verify_plans is set.
    const bool verify = in_place == 0 || verify_in_place;
    PR_ASSIGN_OR_RETURN(VerifiedPlan entry, cachedPlan(request, link, verify));
    if (entry.verified && !entry.report.ok()) {
      const std::string& problem = entry.report.problems.front();
      if (problem.find("no link") == std::string::npos) return entry.report.toStatus(entry.plan->description);
      set.excluded.push_back(std::string(algorithmName(request.algorithm)) + ": " + problem);
      return Status::ok();
    }
    candidate.plans[static_cast<std::size_t>(in_place)] = entry.plan;
  }
  set.candidates.push_back(std::move(candidate));
  return Status::ok();
}

}  // namespace

StatusOr<CandidateSet> buildCandidates(int n, const Topology& topology, bool verify_in_place, Algorithm only) {
  const auto link = topology.accessMatrix();
  const bool mesh = fullMesh(topology);
  CandidateSet set;
  auto wanted = [&](Algorithm a) { return only == Algorithm::kAuto || only == a; };
  for (Algorithm a : {Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRecursiveDoubling, Algorithm::kRabenseifner,
                      Algorithm::kCopyEngineTwoShot}) {
    if (!wanted(a)) continue;
    // Until its rates are measured, the copy-engine two-shot runs only where it is forced: the cost
    // model prices it with uncalibrated copy-engine figures, which must not steer automatic choices.
    if (a == Algorithm::kCopyEngineTwoShot && only != a) continue;
    if (!mesh && n > 1) {
      set.excluded.push_back(std::string(algorithmName(a)) + ": needs a link between every pair of ranks");
      continue;
    }
    PlanRequest request{a, n, false, {}, {}, 1};
    // Where scratch is host memory the copy-engine two-shot reduces from private slots its copy
    // engines filled, so the multiprocessors never read host memory (copy_engine_two_shot.cc).
    request.reduce_from_private = a == Algorithm::kCopyEngineTwoShot && anyHostStagedLink(topology);
    PR_RETURN_IF_ERROR(addCandidate(std::move(request), link, verify_in_place, set));
  }
  if (wanted(Algorithm::kRing)) {
    PlanRequest ring{Algorithm::kRing, n, false, {}, {}, 1};
    if (!mesh) {
      if (auto cycle = findHamiltonianCycle(topology)) {
        ring.ring_order = *cycle;
      } else {
        set.excluded.push_back("ring: no cycle through every rank over the usable links was found");
      }
    }
    if (mesh || !ring.ring_order.empty()) PR_RETURN_IF_ERROR(addCandidate(ring, link, verify_in_place, set));
  }
  if (wanted(Algorithm::kTree)) {
    PR_ASSIGN_OR_RETURN(SpanningTree tree, shallowestSpanningTree(topology));
    for (int pipeline : {1, kTreePipelinedChunks}) {
      PR_RETURN_IF_ERROR(
          addCandidate(PlanRequest{Algorithm::kTree, n, false, {}, tree.parent, pipeline}, link, verify_in_place, set));
    }
  }
  return set;
}

StatusOr<CandidateSet> buildCollectiveCandidates(Collective collective, int root, int n, const Topology& topology,
                                                 bool verify_in_place, Algorithm only) {
  const auto link = topology.accessMatrix();
  const bool mesh = fullMesh(topology);
  CandidateSet set;
  PlanRequest request{Algorithm::kOneShot, n, false};
  request.collective = collective;
  request.root = root;
  // A forced algorithm the collective does not have leaves every one of its algorithms in.
  auto wanted = [&](Algorithm a) { return only == a || !collectiveHasAlgorithm(collective, only); };
  auto add = [&](Algorithm a, std::vector<int> ring_order, std::vector<int> tree_parent, int pipeline) {
    PlanRequest r = request;
    r.algorithm = a;
    r.ring_order = std::move(ring_order);
    r.tree_parent = std::move(tree_parent);
    r.pipeline = pipeline;
    return addCandidate(std::move(r), link, verify_in_place, set);
  };
  if (wanted(Algorithm::kOneShot)) PR_RETURN_IF_ERROR(add(Algorithm::kOneShot, {}, {}, 1));
  // Broadcast's scatter + all-gather: one stage (two signal rounds) and pipelined stages for large
  // messages. Two ranks have one plan, the direct one: listed once, after one-shot, which wins the tie.
  if (collectiveHasAlgorithm(collective, Algorithm::kTwoShot) && wanted(Algorithm::kTwoShot)) {
    if (!mesh && n > 2) {
      set.excluded.push_back("two-shot: needs a link between every pair of ranks");
    } else {
      PR_RETURN_IF_ERROR(add(Algorithm::kTwoShot, {}, {}, 1));
      if (n > 2) PR_RETURN_IF_ERROR(add(Algorithm::kTwoShot, {}, {}, kBroadcastTwoShotStages));
    }
  }
  if (wanted(Algorithm::kRing)) {
    std::optional<std::vector<int>> cycle = std::vector<int>{};
    if (!mesh) cycle = findHamiltonianCycle(topology);
    if (cycle) {
      PR_RETURN_IF_ERROR(add(Algorithm::kRing, *cycle, {}, 1));
    } else {
      set.excluded.push_back("ring: no cycle through every rank over the usable links was found");
    }
  }
  // Recursive halving / doubling reads only its partners: verification leaves it out where one is missing.
  if (collectiveHasAlgorithm(collective, Algorithm::kRecursiveDoubling) && wanted(Algorithm::kRecursiveDoubling)) {
    PR_RETURN_IF_ERROR(add(Algorithm::kRecursiveDoubling, {}, {}, 1));
  }
  // Copy engines: only where forced, as allreduce's (their figures are not measured yet). Readers pull
  // from every owner (a broadcast's from the root): verification leaves it out where a link is missing.
  if (collectiveHasAlgorithm(collective, Algorithm::kCopyEngineTwoShot) && only == Algorithm::kCopyEngineTwoShot) {
    PR_RETURN_IF_ERROR(add(Algorithm::kCopyEngineTwoShot, {}, {}, 1));
  }
  if (wanted(Algorithm::kTree)) {
    for (const CollectiveTree& tree : collectiveTrees(collective, root, topology, mesh)) {
      PR_RETURN_IF_ERROR(add(Algorithm::kTree, {}, tree.parent, tree.pipeline));
    }
  }
  return set;
}

}  // namespace peerreduce
