// Recovery after a failure, in the spirit of ULFM and NCCL's abort/shrink:
//   1. every surviving rank notices the failure (asyncError: kTimeout, kPeerLost, kLinkDown...);
//   2. every rank aborts its communicator (Communicator::abort, safe when all abort at once);
//   3. each rank asks its failure detector what it saw (Communicator::failureReport);
//   4. the ranks agree on what failed (agreeOnFailures over the old world's bootstrap): ranks and links;
//   5. the survivors shrink (shrinkCommunicator, built on planShrink): a new world of the survivors,
//      renumbered in the order of their old ranks, whose topology lacks the dead links, so the
//      candidates re-plan rings and trees around them; the next allreduce runs over the remaining
//      links. A rank the agreement declared failed gets kPeerLost from shrinkCommunicator and leaves.
//
// Example (every rank of the old world, after allreduce or synchronize failed):
//   comm->abort();
//   auto decision = peerreduce::agreeOnFailures(*bootstrap, comm->topology(), comm->failureReport(),
//                                               std::chrono::seconds(10));
//   // survivors make the new world's bootstrap (MPI_Comm_split by decision->survivors) and transport
//   auto next = peerreduce::shrinkCommunicator(*comm, *decision, new_bootstrap, new_transport);
//
// Agreement: each survivor contributes what its own failure detector saw (ranks it lost, links that
// stopped working at its end). Reports travel one hop per round over links neither end reported
// dead; after world_size rounds (the bound: a path among survivors has fewer hops) every survivor
// knows every report of its connected component. A survivor's decision is its component: the
// survivors it heard from; everything else failed. Members of a component therefore decide the same
// set, and a partitioned world splits into groups that each go on alone (the caller picks which one
// continues; the campaign takes the largest).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "peerreduce/status.h"
#include "peerreduce/topology.h"

namespace peerreduce {

class Communicator;
class Transport;

// What one rank's failure detector saw.
struct FailureReport {
  int rank = -1;
  std::vector<int> lost_ranks;                  // peers it stopped hearing from; itself when it failed
  std::vector<std::pair<int, int>> dead_links;  // links at its end that stopped working
};

// One survivor's decision.
struct FailureDecision {
  int rank = -1;
  std::vector<int> survivors;                   // ascending; lacks `rank` when others reported losing it
  std::vector<int> failed;                      // ascending: every other rank of the old world
  std::vector<std::pair<int, int>> dead_links;  // (a, b), a < b, among survivors, each once
  int rounds = 0;                               // rounds until this rank's knowledge stopped growing
};

// Runs the agreement among the ranks that report (the others are presumed dead: they send nothing).
// Deterministic. kInvalidArgument for a report naming ranks outside the world or a rank twice.
StatusOr<std::vector<FailureDecision>> agreeOnFailures(const Topology& topology,
                                                       const std::vector<FailureReport>& reports);

// The same agreement run by every rank of a world: collective over `bootstrap` (the old world's, which
// must still connect every rank: ranks of one process, or MPI processes whose GPU rather than process
// failed). Each rank contributes `mine`; reports are all-gathered and every rank computes the
// agreement above on the reports of the ranks no report names lost (a lost rank relays nothing),
// returning its own decision; a lost rank gets the largest group's decision, which lacks it.
// kInvalidArgument (on the rank that passed it) for a report of another rank, naming ranks outside the
// world, or naming a link not at the reporter's end; the bootstrap's kTimeout naming the ranks that
// never arrived.
StatusOr<FailureDecision> agreeOnFailures(Bootstrap& bootstrap, const Topology& topology, const FailureReport& mine,
                                          std::chrono::milliseconds timeout);

// The group that goes on when a partition leaves several: among the decisions of ranks that survive
// in them, the one with the most survivors (ties: the first, so the group holding the lowest rank when
// decisions are in rank order). Null when no decision keeps its own rank.
const FailureDecision* largestGroup(const std::vector<FailureDecision>& decisions);

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

// Collective over the survivors: the communicator of the shrunk world. This rank's new rank is its
// position in decision.survivors; `bootstrap` and `transport` are the new world's (size: the number of
// survivors). The configuration is `old`'s, with the link mask renumbered and extended by the dead
// links, so the candidates avoid them. kPeerLost when the agreement declared this rank failed;
// kInvalidArgument when the decision is another rank's or the bootstrap or transport is not this
// rank's in a world of the survivors; kUnavailable when the survivors cannot reach one another.
StatusOr<std::unique_ptr<Communicator>> shrinkCommunicator(const Communicator& old, const FailureDecision& decision,
                                                           std::shared_ptr<Bootstrap> bootstrap,
                                                           std::shared_ptr<Transport> transport);

}  // namespace peerreduce
