// Ring: reduce-scatter then allgather around a cycle, each rank reading only from its predecessor.
// Chunk c starts at ring position c, picks up one input per hop, and is complete (finalized) at
// position c-1; the allgather then carries each finished chunk once around the ring. 2(n-1) rounds of
// count/n bytes over one link each: uses only n links, so it runs on a bare ring topology and is
// bandwidth-optimal where per-link bandwidth, not latency, dominates.
#include <numeric>
#include <vector>

#include "algorithms/algorithms.h"
#include "algorithms/ring_order.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kReduceScatterFlag = kFirstAlgorithmFlag;  // "my partial of the next chunk is ready"
constexpr int kAllgatherFlag = kReduceScatterFlag + 1;   // "the next finished chunk is in my scratch"
constexpr int kRingNumFlags = kAllgatherFlag + 1;

int wrap(int value, int n) { return ((value % n) + n) % n; }
}  // namespace

Plan buildRingPlanOver(const std::vector<int>& order, bool in_place) {
  const int n = static_cast<int>(order.size());
  if (n == 1) return buildSingleRankPlan(Algorithm::kRing, in_place);
  PlanBuilder b(Algorithm::kRing, n, n, kRingNumFlags, in_place);
  // Positions p in the ring; rank order[p] reads from order[p-1]. Chunk c is chunk c of the buffer.
  const RingOrder ring(order);
  auto at = [&](int position) { return ring.at(position); };
  const int final_base = n;  // slots n..2n-1 hold finished chunks; 0..n-1 hold partials

  // Reduce-scatter. Step 0 publishes the chunk a position starts; step s reduces chunk p-s.
  for (int p = 0; p < n; ++p) {
    b.copy(at(p), p, inputOf(at(p)), scratchOf(at(p), p));
    b.signal(at(p), at(p + 1), kReduceScatterFlag);
  }
  for (int s = 1; s < n; ++s) {
    const bool last = s == n - 1;
    for (int p = 0; p < n; ++p) b.waitForAll(at(p), at(p - 1), kReduceScatterFlag);
    for (int p = 0; p < n; ++p) {
      const int c = wrap(p - s, n);
      const BufferRef sources[2] = {scratchOf(at(p - 1), c), inputOf(at(p))};
      b.reduce(at(p), c, sources, scratchOf(at(p), last ? final_base + c : c), last);
      if (!last) b.signal(at(p), at(p + 1), kReduceScatterFlag);
    }
  }
  // Allgather. Position p finished chunk p+1; at step t it receives chunk p+1-t from p-1.
  for (int p = 0; p < n; ++p) {
    const int c = wrap(p + 1, n);
    b.copy(at(p), c, scratchOf(at(p), final_base + c), outputOf(at(p)));
    b.signal(at(p), at(p + 1), kAllgatherFlag);
  }
  for (int t = 1; t < n; ++t) {
    const bool last = t == n - 1;
    for (int p = 0; p < n; ++p) b.waitForAll(at(p), at(p - 1), kAllgatherFlag);
    for (int p = 0; p < n; ++p) {
      const int c = wrap(p + 1 - t, n);
      if (last) {
        b.copy(at(p), c, scratchOf(at(p - 1), final_base + c), outputOf(at(p)));
      } else {
        b.copy(at(p), c, scratchOf(at(p - 1), final_base + c), scratchOf(at(p), final_base + c));
        b.copy(at(p), c, scratchOf(at(p), final_base + c), outputOf(at(p)));
        b.signal(at(p), at(p + 1), kAllgatherFlag);
      }
    }
  }
  return b.finish("ring over " + ring.describe());
}

Plan buildRingPlan(int n, bool in_place) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  return buildRingPlanOver(order, in_place);
}

}  // namespace peerreduce
