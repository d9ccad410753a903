// The plans a communicator may run on its topology: every algorithm in every variant that fits the
// links, each built and verified against the link matrix (once per process, algorithms/plan_cache.h).
//
// one-shot, two-shot, recursive doubling, Rabenseifner: need every pair linked; left out otherwise.
// copy-engine two-shot: the same, and a candidate only when forced (its copy-engine figures are not
//   measured yet, so the model's price must not choose it).
// ring: over a Hamiltonian cycle of the usable links (0-1-...-n-1 on a full mesh); left out if the
//   search finds none.
// tree: over the shallowest spanning tree of the usable links, in two variants: one chunk (latency)
//   and kTreePipelinedChunks chunks (bandwidth on large messages). Always possible on a connected world.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/topology.h"
#include "peerreduce/types.h"

namespace peerreduce {

// Chunks the pipelined tree moves: enough to keep every level of an 8-deep tree busy.
inline constexpr int kTreePipelinedChunks = 8;

struct Candidate {
  Algorithm algorithm = Algorithm::kOneShot;
  std::array<std::shared_ptr<const Plan>, 2> plans;  // [out of place, in place]
};

struct CandidateSet {
  std::vector<Candidate> candidates;
  std::vector<std::string> excluded;  // "ring: no cycle through every rank over the usable links"
};

// `only`: kAuto for every algorithm, else just that one (a forced algorithm).
StatusOr<CandidateSet> buildCandidates(int world_size, const Topology& topology, bool verify_in_place, Algorithm only);

// The plans of a collective other than allreduce: one-shot (direct), broadcast's two-shot (1 and
// kBroadcastTwoShotStages stages) and recursive halving / doubling (reduce-scatter, all-gather) where the
// links they read over exist (a broadcast's ranks to its root; every pair; the partners), ring over a
// Hamiltonian cycle of the usable links, and the trees of
// algorithms/collective_routes.h (binomial on a full mesh, relays otherwise). `only`: a forced algorithm,
// applied when the collective has it (kAuto, or one it does not have: all of them).
StatusOr<CandidateSet> buildCollectiveCandidates(Collective collective, int root, int world_size,
                                                 const Topology& topology, bool verify_in_place, Algorithm only);

}  // namespace peerreduce
