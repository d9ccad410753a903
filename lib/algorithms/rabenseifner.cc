// Rabenseifner: reduce-scatter by recursive halving, then allgather by recursive doubling. At each
// halving round partners split their common range of chunks, each keeping one half and reducing the
// partner's copy of it into its own (lower virtual rank first); after log2(p) rounds virtual rank v
// holds chunk v complete, and the doubling rounds spread the finished chunks back. A world that is not
// a power of two folds first (as recursive doubling does). 2 log2(p) latencies and about 2 x count
// bytes per rank: bandwidth-optimal with logarithmic latency.
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kRabenseifnerDataFlag = kFirstAlgorithmFlag;  // "the chunks my partner needs are ready in my scratch"
constexpr int kRabenseifnerNumFlags = kRabenseifnerDataFlag + 1;
}  // namespace

Plan buildRabenseifnerPlan(int n, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kRabenseifner, in_place);
  const PowerOfTwoFold fold(n);
  const int p = fold.active;
  PlanBuilder b(Algorithm::kRabenseifner, n, p, kRabenseifnerNumFlags, in_place);
  // Slot c holds this rank's current value of chunk c.
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < p; ++c) b.copy(r, c, inputOf(r), scratchOf(r, c));
  }
  if (fold.extra > 0) {
    for (int r = 0; r < 2 * fold.extra; r += 2) b.signal(r + 1, r, kRabenseifnerDataFlag);
    for (int r = 0; r < 2 * fold.extra; r += 2) {
      b.waitForAll(r, r + 1, kRabenseifnerDataFlag);
      for (int c = 0; c < p; ++c) {
        const BufferRef sources[2] = {scratchOf(r, c), scratchOf(r + 1, c)};
        b.reduce(r, c, sources, scratchOf(r, c), p == 1);
      }
    }
  }
  // Reduce-scatter by recursive halving: distance p/2 first, so virtual rank v ends with chunk v.
  std::vector<int> low(static_cast<std::size_t>(p), 0);  // start of each virtual rank's chunk range
  for (int distance = p / 2; distance >= 1; distance /= 2) {
    const bool last = distance == 1;
    for (int v = 0; v < p; ++v)
      b.signal(fold.rankOfVirtual(v), fold.rankOfVirtual(v ^ distance), kRabenseifnerDataFlag);
    for (int v = 0; v < p; ++v)
      b.waitForAll(fold.rankOfVirtual(v), fold.rankOfVirtual(v ^ distance), kRabenseifnerDataFlag);
    for (int v = 0; v < p; ++v) {
      const int r = fold.rankOfVirtual(v);
      const int lower = fold.rankOfVirtual(v & ~distance);
      const int upper = fold.rankOfVirtual(v | distance);
      int& start = low[static_cast<std::size_t>(v)];
      if (v & distance) start += distance;
      for (int c = start; c < start + distance; ++c) {
        const BufferRef sources[2] = {scratchOf(lower, c), scratchOf(upper, c)};
        b.reduce(r, c, sources, scratchOf(r, c), last);
      }
    }
  }
  for (int v = 0; v < p; ++v)
    b.copy(fold.rankOfVirtual(v), v, scratchOf(fold.rankOfVirtual(v), v), outputOf(fold.rankOfVirtual(v)));
  // Allgather by recursive doubling: each round doubles the finished range a rank holds.
  for (int distance = 1; distance < p; distance *= 2) {
    for (int v = 0; v < p; ++v)
      b.signal(fold.rankOfVirtual(v), fold.rankOfVirtual(v ^ distance), kRabenseifnerDataFlag);
    for (int v = 0; v < p; ++v)
      b.waitForAll(fold.rankOfVirtual(v), fold.rankOfVirtual(v ^ distance), kRabenseifnerDataFlag);
    for (int v = 0; v < p; ++v) {
      const int r = fold.rankOfVirtual(v);
      const int partner = v ^ distance;
      const int partner_start = partner & ~(distance - 1);
      for (int c = partner_start; c < partner_start + distance; ++c) {
        b.copy(r, c, scratchOf(fold.rankOfVirtual(partner), c), scratchOf(r, c));
        b.copy(r, c, scratchOf(r, c), outputOf(r));
      }
    }
  }
  if (fold.extra > 0) {
    for (int r = 0; r < 2 * fold.extra; r += 2) b.signal(r, r + 1, kRabenseifnerDataFlag);
    for (int r = 0; r < 2 * fold.extra; r += 2) {
      b.waitForAll(r + 1, r, kRabenseifnerDataFlag);
      for (int c = 0; c < p; ++c) b.copy(r + 1, c, scratchOf(r, c), outputOf(r + 1));
    }
  }
  return b.finish("rabenseifner over " + std::to_string(p) + " ranks" +
                  (fold.extra ? " (+" + std::to_string(fold.extra) + " folded)" : std::string()));
}

}  // namespace peerreduce
