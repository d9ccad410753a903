// Two-shot: reduce-scatter then allgather, both over direct reads. Rank r owns chunk r: it reads
// chunk r of every rank's published input, reduces in rank order into its result slot, and every
// rank then reads each owner's result. Two synchronisation rounds, 2 x (n-1)/n x count bytes read
// per rank: the choice for medium and large messages on a full mesh.
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kTwoShotReadyFlag = kFirstAlgorithmFlag;  // "my input chunks are in my scratch"
constexpr int kResultFlag = kTwoShotReadyFlag + 1;      // "my chunk's result is in my result slot"
constexpr int kTwoShotNumFlags = kResultFlag + 1;
}  // namespace

Plan buildTwoShotPlan(int n, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kTwoShot, in_place);
  PlanBuilder b(Algorithm::kTwoShot, n, n, kTwoShotNumFlags, in_place);
  const int result_slot = n;  // slots 0..n-1 hold the published input chunks
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) b.copy(r, c, inputOf(r), scratchOf(r, c));
    for (int q = 0; q < n; ++q) {
      if (q != r) b.signal(r, q, kTwoShotReadyFlag);
    }
  }
  for (int r = 0; r < n; ++r) {
    for (int q = 0; q < n; ++q) {
      if (q != r) b.waitForAll(r, q, kTwoShotReadyFlag);
    }
    std::vector<BufferRef> sources;
    for (int q = 0; q < n; ++q) sources.push_back(scratchOf(q, r));
    b.reduce(r, r, sources, scratchOf(r, result_slot), true);
    for (int q = 0; q < n; ++q) {
      if (q != r) b.signal(r, q, kResultFlag);
    }
  }
  for (int r = 0; r < n; ++r) {
    for (int q = 0; q < n; ++q) {
      if (q != r) b.waitForAll(r, q, kResultFlag);
    }
    for (int c = 0; c < n; ++c) b.copy(r, c, scratchOf(c, result_slot), outputOf(r));
  }
  return b.finish("two-shot: rank c reduces chunk c, every rank gathers the " + std::to_string(n) + " results");
}

}  // namespace peerreduce
