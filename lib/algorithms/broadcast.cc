// Broadcast: the root's input becomes every rank's output; other ranks' inputs are never read.
//
// Direct (one-shot): the root publishes its input in its scratch and signals; every other rank copies it
// from there. One synchronisation round; the root's memory serves n-1 readers.
// Ring: a chain from the root along the cycle, pipelined in kBroadcastRingChunks chunks: each rank
// copies a chunk from its predecessor's scratch into its own, tells its successor, then writes its
// output, so n-1 links carry the data at once. No arithmetic: every output element is the root's bits.
#include <vector>

#include "algorithms/algorithms.h"
#include "algorithms/ring_order.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kBroadcastReadyFlag = kFirstAlgorithmFlag;  // "the next chunk is in my scratch"
constexpr int kBroadcastNumFlags = kBroadcastReadyFlag + 1;
}  // namespace

Plan buildBroadcastDirectPlan(int n, int root, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kOneShot, in_place, Collective::kBroadcast);
  PlanBuilder b(Algorithm::kOneShot, n, 1, kBroadcastNumFlags, in_place, Collective::kBroadcast, root);
  constexpr int kChunk = 0;  // the whole buffer as one chunk
  b.copy(root, kChunk, inputOf(root), scratchOf(root, 0));
  b.copy(root, kChunk, inputOf(root), outputOf(root));  // in place the same memory: left as it is
  for (int q = 0; q < n; ++q) {
    if (q != root) b.signal(root, q, kBroadcastReadyFlag);
  }
  for (int r = 0; r < n; ++r) {
    if (r == root) continue;
    b.waitForAll(r, root, kBroadcastReadyFlag);
    b.copy(r, kChunk, scratchOf(root, 0), outputOf(r));
  }
  return b.finish("broadcast one-shot from " + std::to_string(root) + ": every rank copies the root's buffer");
}

Plan buildBroadcastRingPlan(const std::vector<int>& order, int root, bool in_place) {
  const int n = static_cast<int>(order.size());
  if (n == 1) return buildSingleRankPlan(Algorithm::kRing, in_place, Collective::kBroadcast);
  constexpr int kChunks = kBroadcastRingChunks;
  PlanBuilder b(Algorithm::kRing, n, kChunks, kBroadcastNumFlags, in_place, Collective::kBroadcast, root);
  const RingOrder ring(order);
  const int start = ring.positionOf(root);
  auto rankAt = [&](int hop) { return ring.at(start + hop); };  // hop 0 is the root, n-1 the chain's end
  // Round t: the rank `hop` hops from the root handles chunk t - hop. Within a round the chain is walked
  // from its end back to the root, so each wait is emitted before the predecessor's signal of the same
  // round and waits for exactly the chunk it reads (PlanBuilder::waitForAll counts what was sent so far).
  for (int round = 0; round < n - 1 + kChunks; ++round) {
    for (int hop = n - 1; hop >= 0; --hop) {
      const int chunk = round - hop;
      if (chunk < 0 || chunk >= kChunks) continue;
      const int self = rankAt(hop);
      if (hop == 0) {
        b.copy(self, chunk, inputOf(self), scratchOf(self, chunk));
        b.signal(self, rankAt(1), kBroadcastReadyFlag);
        b.copy(self, chunk, inputOf(self), outputOf(self));
        continue;
      }
      b.waitForAll(self, rankAt(hop - 1), kBroadcastReadyFlag);
      const BufferRef from = scratchOf(rankAt(hop - 1), chunk);
      if (hop == n - 1) {
        b.copy(self, chunk, from, outputOf(self));
        continue;
      }
      b.copy(self, chunk, from, scratchOf(self, chunk));
      b.signal(self, rankAt(hop + 1), kBroadcastReadyFlag);
      b.copy(self, chunk, scratchOf(self, chunk), outputOf(self));
    }
  }
  return b.finish("broadcast ring from " + std::to_string(root) + " over " + ring.describe(start) + " in " +
                  std::to_string(kChunks) + " chunks");
}

}  // namespace peerreduce
