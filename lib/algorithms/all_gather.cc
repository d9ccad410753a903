// All-gather: rank b's input becomes block b of every rank's output.
//
// Direct (one-shot): every rank publishes its input in its scratch and signals; every rank then copies
// each peer's block from that peer's scratch. One synchronisation round, (n-1) blocks read per rank.
// Ring: each block travels once around the cycle, each rank reading only from its predecessor and
// passing the block on through its own scratch; (n-1) rounds of one block over one link.
// No arithmetic: every output element is a copy of its source's bits.
#include <vector>

#include "algorithms/algorithms.h"
#include "algorithms/ring_order.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kAllGatherReadyFlag = kFirstAlgorithmFlag;  // "a block is in my scratch"
constexpr int kAllGatherNumFlags = kAllGatherReadyFlag + 1;
constexpr int kAllGatherChunksPerBlock = 1;  // a step moves a whole block
}  // namespace

Plan buildAllGatherDirectPlan(int n, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kOneShot, in_place, Collective::kAllGather);
  PlanBuilder b(Algorithm::kOneShot, n, kAllGatherChunksPerBlock, kAllGatherNumFlags, in_place, Collective::kAllGather);
  // Chunk index = block = the rank that contributes it; every rank publishes its block in slot 0.
  for (int r = 0; r < n; ++r) {
    b.copy(r, r, inputOf(r), scratchOf(r, 0));
    b.copy(r, r, inputOf(r), outputOf(r));  // in place the same memory: the copy leaves it as it is
    for (int q = 0; q < n; ++q) {
      if (q != r) b.signal(r, q, kAllGatherReadyFlag);
    }
  }
  for (int r = 0; r < n; ++r) {
    for (int q = 0; q < n; ++q) {
      if (q != r) b.waitForAll(r, q, kAllGatherReadyFlag);
    }
    for (int q = 0; q < n; ++q) {
      if (q != r) b.copy(r, q, scratchOf(q, 0), outputOf(r));
    }
  }
  return b.finish("all-gather one-shot: every rank copies the " + std::to_string(n) + " published blocks");
}

Plan buildAllGatherRingPlan(const std::vector<int>& order, bool in_place) {
  const int n = static_cast<int>(order.size());
  if (n == 1) return buildSingleRankPlan(Algorithm::kRing, in_place, Collective::kAllGather);
  PlanBuilder b(Algorithm::kRing, n, kAllGatherChunksPerBlock, kAllGatherNumFlags, in_place, Collective::kAllGather);
  const RingOrder ring(order);
  // At step t, position p receives the block of the rank at p-t from p-1. Scratch slot b holds block b,
  // written once per operation.
  for (int p = 0; p < n; ++p) {
    const int self = ring.at(p);
    b.copy(self, self, inputOf(self), scratchOf(self, self));
    b.copy(self, self, inputOf(self), outputOf(self));
    b.signal(self, ring.at(p + 1), kAllGatherReadyFlag);
  }
  for (int t = 1; t < n; ++t) {
    const bool last = t == n - 1;
    for (int p = 0; p < n; ++p) b.waitForAll(ring.at(p), ring.at(p - 1), kAllGatherReadyFlag);
    for (int p = 0; p < n; ++p) {
      const int self = ring.at(p);
      const int block = ring.at(p - t);
      const BufferRef from = scratchOf(ring.at(p - 1), block);
      if (last) {
        b.copy(self, block, from, outputOf(self));
      } else {
        b.copy(self, block, from, scratchOf(self, block));
        b.copy(self, block, scratchOf(self, block), outputOf(self));
        b.signal(self, ring.at(p + 1), kAllGatherReadyFlag);
      }
    }
  }
  return b.finish("all-gather ring over " + ring.describe());
}

}  // namespace peerreduce
