// The allreduce algorithms: each turns a world size into a Plan (see peerreduce/plan.h).
//
// Every algorithm here is pull-based: a rank writes only its own scratch and its own output, and
// reads peers' scratch after their signal. That keeps hazards between consecutive operations to
// "the owner must not overwrite scratch a peer still reads", which the entry fence (kDoneFlag)
// prevents whatever algorithm ran before.
//
// Reduction order is canonical: a chunk's value is always combined lower (virtual) rank first, and
// where several ranks compute the same value they build the same expression, so every rank ends with
// the same bits.
#pragma once

#include <string_view>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/status.h"
#include "topology/routes.h"

namespace peerreduce {

struct PlanRequest {
  // A constructor rather than aggregate initialisation, so call sites name only what they need.
  PlanRequest(Algorithm algorithm_in = Algorithm::kOneShot, int world_size_in = 1, bool in_place_in = false,
              std::vector<int> ring_order_in = {}, std::vector<int> tree_parent_in = {}, int pipeline_in = 1)
      : algorithm(algorithm_in),
        world_size(world_size_in),
        in_place(in_place_in),
        ring_order(std::move(ring_order_in)),
        tree_parent(std::move(tree_parent_in)),
        pipeline(pipeline_in) {}

  Algorithm algorithm = Algorithm::kOneShot;  // not kAuto: selection happens before planning
  int world_size = 1;
  bool in_place = false;
  std::vector<int> ring_order;   // kRing: the cycle to follow (a permutation); empty = 0, 1, ..., n-1
  std::vector<int> tree_parent;  // kTree: each rank's parent, -1 for the root; empty = a star around 0
  int pipeline = 1;              // kTree: chunks the buffer moves in; broadcast's kTwoShot: its stages
  // kCopyEngineTwoShot: each owner first copies its peers' shards from its scratch into private slots
  // (Plan::private_slots) and reduces from there. Where scratch is pinned host memory (host-staged
  // worlds) a copy engine then brings the data down and the multiprocessors never read host memory.
  bool reduce_from_private = false;
  // The collective the plan is for; the others than allreduce have one-shot (direct), ring, recursive
  // doubling (reduce-scatter: halving; not broadcast), two-shot (broadcast only: scatter, then all-gather)
  // and tree plans (tree_parent empty: the binomial tree rooted at `root`; pipeline: broadcast's only).
  Collective collective = Collective::kAllReduce;
  int root = 0;  // kBroadcast: the rank whose input every rank receives

  // Hash of every field (the plan cache's key) and a short name of the variant ("ring over 0-2-1-3").
  std::uint64_t fingerprint() const;
  friend bool operator==(const PlanRequest&, const PlanRequest&) = default;
};

// Most chunks a tree plan pipelines (each needs two scratch slots).
inline constexpr int kMaxTreePipeline = 64;

// Builds the plan, or says why it cannot (kAuto, world size out of 1..kMaxWorldSize, a ring order that
// is not a permutation, a tree that is not a tree).
StatusOr<Plan> buildPlan(const PlanRequest& request);
Status checkPermutation(const std::vector<int>& order, int world_size);

// The individual generators; preconditions: 1 <= world_size <= kMaxWorldSize.
Plan buildOneShotPlan(int world_size, bool in_place);
Plan buildTwoShotPlan(int world_size, bool in_place);
Plan buildRingPlan(int world_size, bool in_place);
// A ring visiting the ranks in `order` (a permutation of 0..n-1): each rank reads only from the rank
// before it, so any Hamiltonian cycle of the available links carries it.
Plan buildRingPlanOver(const std::vector<int>& order, bool in_place);
Plan buildRecursiveDoublingPlan(int world_size, bool in_place);
Plan buildRabenseifnerPlan(int world_size, bool in_place);
// Two-shot with copy-engine scatter (push into the owners' scratch) and gather (pull into the own
// output), in kCopyEngineTwoShotStages pipelined stages (copy_engine_two_shot.cc).
Plan buildCopyEngineTwoShotPlan(int world_size, bool in_place, bool reduce_from_private = false);
// Stages of the copy-engine two-shot: enough that copies of one stage overlap the reduction of another
// for most of the operation, few enough that a copy's launch cost stays small next to its bytes.
inline constexpr int kCopyEngineTwoShotStages = 4;

// A tree over the links of a partially connected world (relays between ranks that are not linked);
// the buffer moves in `pipeline` chunks.
Plan buildTreePlan(const SpanningTree& tree, int pipeline, bool in_place);

// One rank: the output is the input, with avg's division applied (a one-source reduction) where the
// collective reduces, copied where it does not.
Plan buildSingleRankPlan(Algorithm algorithm, bool in_place, Collective collective = Collective::kAllReduce);

// The other collectives (NCCL's buffer semantics, peerreduce/communicator.h), in these two plans and the
// recursive and tree plans below:
// direct ("one-shot": one synchronisation round, reads straight from the rank that holds the data; needs
// those links) and ring (around a cycle given as a permutation, each rank reading only from the rank
// before it, so any Hamiltonian cycle of the links carries it).
Plan buildReduceScatterDirectPlan(int world_size, bool in_place);
Plan buildReduceScatterRingPlan(const std::vector<int>& order, bool in_place);
Plan buildAllGatherDirectPlan(int world_size, bool in_place);
Plan buildAllGatherRingPlan(const std::vector<int>& order, bool in_place);
Plan buildBroadcastDirectPlan(int world_size, int root, bool in_place);
// A chain from the root along the cycle `order`, pipelined in kBroadcastRingChunks chunks.
Plan buildBroadcastRingPlan(const std::vector<int>& order, int root, bool in_place);
// Two-shot (scatter, then all-gather): the root's buffer leaves the root once, each of the n-1 other ranks
// taking one part, and they then copy the other parts from each other; in `stages` pipelined stages
// (1..kMaxBroadcastTwoShotStages). Two ranks have nothing to gather: the direct plan, named two-shot.
Plan buildBroadcastTwoShotPlan(int world_size, int root, int stages, bool in_place);

// For any world size: reduce-scatter by recursive halving and all-gather by recursive doubling (a world
// that is not a power of two folds as allreduce's recursive doubling does). Both are Algorithm::
// kRecursiveDoubling, the log2 exchange family.
Plan buildReduceScatterHalvingPlan(int world_size, bool in_place);
Plan buildAllGatherDoublingPlan(int world_size, bool in_place);
// Along a spanning tree of the links (relays for partial connectivity; broadcast's binomial tree on a full
// mesh). Broadcast's root is the tree's, its buffer moves in `pipeline` chunks.
Plan buildReduceScatterTreePlan(const SpanningTree& tree, bool in_place);
Plan buildAllGatherTreePlan(const SpanningTree& tree, bool in_place);
Plan buildBroadcastTreePlan(const SpanningTree& tree, int pipeline, bool in_place);
// The binomial tree over n ranks rooted at `root`, as parents (-1 for the root): rank r's parent is the
// rank whose distance from the root is r's with its highest bit cleared; depth ceil(log2 n).
std::vector<int> binomialTreeParents(int n, int root);

// Chunks the broadcast chain moves: enough that a chain of 8 ranks is busy at once for most of the
// operation, few enough that per-step overheads stay small next to the data of a large message.
inline constexpr int kBroadcastRingChunks = 8;
// Stages of the pipelined broadcast two-shot candidate: the root's and the gathering's copies overlap
// for all but one stage of (stages + 1), at a signal round per stage, which a large message's segment
// (16 MiB is ~50 us on a 350 GB/s port) carries. At most 16: 16 x 63 parts stay within a plan file's
// 1024 chunks (plan/plan_text.h), so every built plan can be written out.
inline constexpr int kBroadcastTwoShotStages = 4;
inline constexpr int kMaxBroadcastTwoShotStages = 16;

// The algorithms a collective other than allreduce has, for messages: "one-shot (direct), two-shot, ring
// and tree".
std::string_view collectiveAlgorithmList(Collective collective);

// All-gather, broadcast and reduce-scatter by copy engines (copy_engine_collectives.cc;
// Algorithm::kCopyEngineTwoShot for these collectives): owners publish their chunks into scratch a stage
// ahead and every reader's copy engine pulls them into its output (all-gather, broadcast).
Plan buildAllGatherCopyEnginePlan(int world_size, bool in_place);
Plan buildBroadcastCopyEnginePlan(int world_size, int root, bool in_place);
// Reduce-scatter by copy engines: writers push each stage into the owners' scratch, owners fold it.
Plan buildReduceScatterCopyEnginePlan(int world_size, bool in_place);

// The plan of a collective other than allreduce (buildPlan dispatches here).
StatusOr<Plan> buildCollectivePlan(const PlanRequest& request);

// Folding a world that is not a power of two onto its largest power-of-two subset: the first
// 2*extra ranks pair up (odd into even), the rest keep going. Shared by recursive doubling and
// Rabenseifner.
struct PowerOfTwoFold {
  int world_size = 1;
  int active = 1;  // largest power of two <= world_size
  int extra = 0;   // world_size - active: ranks folded into a partner

  explicit PowerOfTwoFold(int n);
  // Virtual rank among the active ranks, or -1 for a rank folded into its partner.
  int virtualRank(int rank) const;
  int rankOfVirtual(int vrank) const;
  bool isFolded(int rank) const { return virtualRank(rank) < 0; }
  // The active rank that a folded rank hands its data to, or the folded rank of an active one (-1 if none).
  int foldPartner(int rank) const;
};

}  // namespace peerreduce
