// Reduce-scatter: block b of every rank's input, reduced, lands in rank b's output.
//
// Direct (one-shot): every rank publishes the blocks others own in its scratch and signals; rank b then
// reads block b of every rank and reduces them in rank order (its own straight from its input). One
// synchronisation round, (n-1)/n x the input read per rank over n-1 links: two-shot's first half.
// Ring: block b starts at the position after b's, picks up one input per hop and is finished at b
// after n-1 hops, each rank reading only from its predecessor; (n-1) rounds of one block over one link.
// Either way a block has one fold order, fixed by the plan, so every run gives the same bits.
#include <vector>

#include "algorithms/algorithms.h"
#include "algorithms/ring_order.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kReduceScatterReadyFlag =
    kFirstAlgorithmFlag;  // direct: "my blocks are in my scratch"; ring: "a partial is"
constexpr int kReduceScatterNumFlags = kReduceScatterReadyFlag + 1;
constexpr int kReduceScatterChunksPerBlock = 1;  // a step moves a whole block: the scratch slot is one block's segment
}  // namespace

Plan buildReduceScatterDirectPlan(int n, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kOneShot, in_place, Collective::kReduceScatter);
  PlanBuilder b(Algorithm::kOneShot, n, kReduceScatterChunksPerBlock, kReduceScatterNumFlags, in_place,
                Collective::kReduceScatter);
  // Chunk index = block (one chunk per block); rank r's scratch slot q holds its block q for rank q.
  for (int r = 0; r < n; ++r) {
    for (int block = 0; block < n; ++block) {
      if (block != r) b.copy(r, block, inputOf(r), scratchOf(r, block));
    }
    for (int q = 0; q < n; ++q) {
      if (q != r) b.signal(r, q, kReduceScatterReadyFlag);
    }
  }
  for (int r = 0; r < n; ++r) {
    for (int q = 0; q < n; ++q) {
      if (q != r) b.waitForAll(r, q, kReduceScatterReadyFlag);
    }
    std::vector<BufferRef> sources;
    for (int q = 0; q < n; ++q) sources.push_back(q == r ? inputOf(r) : scratchOf(q, r));
    b.reduce(r, r, sources, outputOf(r), true);
  }
  return b.finish("reduce-scatter one-shot: rank b reduces block b of all " + std::to_string(n) +
                  " inputs in rank order");
}

Plan buildReduceScatterRingPlan(const std::vector<int>& order, bool in_place) {
  const int n = static_cast<int>(order.size());
  if (n == 1) return buildSingleRankPlan(Algorithm::kRing, in_place, Collective::kReduceScatter);
  PlanBuilder b(Algorithm::kRing, n, kReduceScatterChunksPerBlock, kReduceScatterNumFlags, in_place,
                Collective::kReduceScatter);
  const RingOrder ring(order);
  // At step s, position p handles the block of the rank at p-1-s: the block of position q starts at
  // q+1 (step 0) and reaches q at step n-1. A rank's scratch slot b holds its partial of block b, written
  // once per operation.
  for (int p = 0; p < n; ++p) {
    const int block = ring.at(p - 1);
    b.copy(ring.at(p), block, inputOf(ring.at(p)), scratchOf(ring.at(p), block));
    b.signal(ring.at(p), ring.at(p + 1), kReduceScatterReadyFlag);
  }
  for (int s = 1; s < n; ++s) {
    const bool last = s == n - 1;
    for (int p = 0; p < n; ++p) b.waitForAll(ring.at(p), ring.at(p - 1), kReduceScatterReadyFlag);
    for (int p = 0; p < n; ++p) {
      const int self = ring.at(p);
      const int block = ring.at(p - 1 - s);
      const BufferRef sources[2] = {scratchOf(ring.at(p - 1), block), inputOf(self)};
      b.reduce(self, block, sources, last ? outputOf(self) : scratchOf(self, block), last);
      if (!last) b.signal(self, ring.at(p + 1), kReduceScatterReadyFlag);
    }
  }
  return b.finish("reduce-scatter ring over " + ring.describe());
}

}  // namespace peerreduce
