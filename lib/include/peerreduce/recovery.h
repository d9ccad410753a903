// Recovery after a failure, in the spirit of ULFM and NCCL's abort/shrink:
//   1. every surviving rank notices the failure (asyncError: kTimeout, kPeerLost, kLinkDown...);
//   2. every survivor aborts its communicator (Communicator::abort, safe when all abort at once);
//   3. the survivors agree on what failed (agreeOnFailures): ranks and links;
//   4. they shrink (planShrink): a new world of the survivors, renumbered in the order of their old
//      ranks, whose topology lacks the dead links, so the candidates re-plan rings and trees around
//      them; the next allreduce on the new communicator runs over the remaining links.
//
// Agreement: each survivor contributes what its own failure detector saw (ranks it lost, links that
// stopped working at its end). Reports travel one hop per round over links neither end reported
// dead; after world_size rounds (the bound: a path among survivors has fewer hops) every survivor
// knows every report of its connected component. A survivor's decision is its component: the
// survivors it heard from; everything else failed. Members of a component therefore decide the same
// set, and a partitioned world splits into groups that each go on alone (the caller picks which one
// continues; the campaign takes the largest).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "peerreduce/status.h"
#include "peerreduce/topology.h"

namespace peerreduce {

// What one survivor's failure detector saw.
struct FailureReport {
  int rank = -1;
  std::vector<int> lost_ranks;                    // peers it stopped hearing from
  std::vector<std::pair<int, int>> dead_links;    // links at its end that stopped working
};

// One survivor's decision.
struct FailureDecision {
  int rank = -1;
  std::vector<int> survivors;                     // ascending; lacks `rank` when others reported losing it
  std::vector<int> failed;                        // ascending: every other rank of the old world
  std::vector<std::pair<int, int>> dead_links;    // (a, b), a < b, among survivors, each once
  int rounds = 0;                                 // rounds until this rank's knowledge stopped growing
};

// Runs the agreement among the ranks that report (the others are presumed dead: they send nothing).
// Deterministic. kInvalidArgument for a report naming ranks outside the world or a rank twice.
StatusOr<std::vector<FailureDecision>> agreeOnFailures(const Topology& topology,
                                                       const std::vector<FailureReport>& reports);

// True when every decision in `decisions` that belongs to the group of `rank` equals its decision.
bool decisionsAgree(const std::vector<FailureDecision>& decisions, int rank);

// The world of a group of survivors.
struct ShrinkPlan {
  std::vector<int> old_rank;  // new rank i was old_rank[i]
  Topology topology;          // the survivors' links, dead links removed (both directions)
  std::string describe() const;
};
// kUnavailable when the survivors cannot all reach one another over the remaining links.
StatusOr<ShrinkPlan> planShrink(const Topology& topology, const FailureDecision& decision);

}  // namespace peerreduce
