// Routes over partial connectivity: which ranks can work together directly, and the cycles and trees
// that plans follow when not every pair is linked.
//
// Pull-based plans read a peer's memory and signal it, so a pair is usable when each of the two can
// reach the other's memory (both directed links exist).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "peerreduce/status.h"
#include "peerreduce/topology.h"

namespace peerreduce {

bool usablePair(const Topology& topology, int a, int b);

// Groups of ranks joined by usable pairs (each sorted; groups ordered by their lowest rank).
std::vector<std::vector<int>> connectedComponents(const Topology& topology);

// kUnavailable naming the ranks rank 0 cannot reach (directly or through relays), or ok.
Status checkConnected(const Topology& topology);

// Whether `masked` (`unmasked` with the link mask `mask`, given by `source`, applied) still connects
// every rank: ok when it does, even where `unmasked` did not (host-staged entries add links). Otherwise a
// machine that is disconnected already is kUnavailable (checkConnected of `unmasked`); a
// mask that disconnects a connected machine is kInvalidArgument naming the mask, its source and the ranks
// cut off: the setting, not the machine, is wrong.
Status checkMaskKeepsConnected(const Topology& unmasked, const Topology& masked, const std::string& mask,
                               const std::string& source);

// Expansions of the Hamiltonian-cycle search before it gives up: enough for every topology up to 64
// ranks that has a cycle findable by the degree-ordered search, small enough (~10 ms) for creation.
inline constexpr std::uint64_t kHamiltonianSearchBudget = 200000;

// A cycle through every rank over usable pairs, as the order of ranks starting at rank 0. Prefers
// cycles over the fastest links: it first tries only the links of the highest bandwidth, then admits
// slower classes. nullopt when none was found within the budget (there may still be one).
std::optional<std::vector<int>> findHamiltonianCycle(const Topology& topology,
                                                     std::uint64_t budget = kHamiltonianSearchBudget);

// A spanning tree over usable pairs, rooted where it is shallowest (ties: lowest rank), children in
// rank order. Built breadth first, so every rank is as few hops from the root as the links allow.
struct SpanningTree {
  int root = 0;
  std::vector<int> parent;                 // parent[root] == -1
  std::vector<std::vector<int>> children;  // sorted
  int height = 0;                          // hops from the root to the deepest rank
};
StatusOr<SpanningTree> shallowestSpanningTree(const Topology& topology);
// The tree with these parents (-1 for exactly one root); kInvalidArgument if they do not form a tree.
StatusOr<SpanningTree> treeFromParents(const std::vector<int>& parent);

}  // namespace peerreduce
