// One-shot: every rank publishes its whole input in its scratch, then reads all n copies and reduces
// them in rank order. One synchronisation round and (n-1) x count bytes read per rank: the fastest
// for small messages, bandwidth-bound for large ones.
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kOneShotReadyFlag = kFirstAlgorithmFlag;  // "my input is in my scratch slot 0"
constexpr int kOneShotNumFlags = kOneShotReadyFlag + 1;
constexpr int kOneShotChunk = 0;  // one-shot moves the whole buffer as one chunk
}  // namespace

Plan buildOneShotPlan(int n, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kOneShot, in_place);
  PlanBuilder b(Algorithm::kOneShot, n, 1, kOneShotNumFlags, in_place);
  for (int r = 0; r < n; ++r) {
    b.copy(r, kOneShotChunk, inputOf(r), scratchOf(r, 0));
    for (int q = 0; q < n; ++q) {
      if (q != r) b.signal(r, q, kOneShotReadyFlag);
    }
  }
  std::vector<BufferRef> sources;
  for (int q = 0; q < n; ++q) sources.push_back(scratchOf(q, 0));
  for (int r = 0; r < n; ++r) {
    for (int q = 0; q < n; ++q) {
      if (q != r) b.waitForAll(r, q, kOneShotReadyFlag);
    }
    b.reduce(r, kOneShotChunk, sources, outputOf(r), true);
  }
  return b.finish("one-shot: every rank reduces all " + std::to_string(n) + " inputs in rank order");
}

}  // namespace peerreduce
