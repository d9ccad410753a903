// Recursive doubling: log2(p) rounds in which partners at distance 1, 2, 4, ... exchange their whole
// partial results and both combine them (lower virtual rank first, so both build the same value).
// A world that is not a power of two first folds its first 2*extra ranks pairwise and hands the result
// back at the end. log2(p) latencies but count bytes per round: the latency-optimal choice for small
// messages when a one-shot's n-1 reads are too many.
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kRecursiveDoublingDataFlag = kFirstAlgorithmFlag;  // "my current partial result is ready in my scratch"
constexpr int kRecursiveDoublingNumFlags = kRecursiveDoublingDataFlag + 1;
constexpr int kRecursiveDoublingChunk = 0;
constexpr int kInputSlot = 0;
}  // namespace

Plan buildRecursiveDoublingPlan(int n, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kRecursiveDoubling, in_place);
  const PowerOfTwoFold fold(n);
  PlanBuilder b(Algorithm::kRecursiveDoubling, n, 1, kRecursiveDoublingNumFlags, in_place);
  std::vector<int> current(static_cast<std::size_t>(n), kInputSlot);  // slot holding each rank's partial
  int next_slot = kInputSlot + 1;

  for (int r = 0; r < n; ++r) b.copy(r, kRecursiveDoublingChunk, inputOf(r), scratchOf(r, kInputSlot));
  // Fold: odd rank 2i+1 < 2*extra hands its input to 2i.
  if (fold.extra > 0) {
    for (int r = 0; r < 2 * fold.extra; r += 2) b.signal(r + 1, r, kRecursiveDoublingDataFlag);
    for (int r = 0; r < 2 * fold.extra; r += 2) {
      b.waitForAll(r, r + 1, kRecursiveDoublingDataFlag);
      const BufferRef sources[2] = {scratchOf(r, kInputSlot), scratchOf(r + 1, kInputSlot)};
      b.reduce(r, kRecursiveDoublingChunk, sources, scratchOf(r, next_slot), false);
      current[static_cast<std::size_t>(r)] = next_slot;
    }
    ++next_slot;
  }
  if (fold.active == 1) {
    // Only possible when n == 1 (handled above); kept so the loop below never runs empty by surprise.
    return b.finish("recursive doubling (trivial)");
  }
  for (int distance = 1; distance < fold.active; distance *= 2) {
    const bool last = distance * 2 == fold.active;
    const bool direct_to_output = last && fold.extra == 0;
    for (int v = 0; v < fold.active; ++v)
      b.signal(fold.rankOfVirtual(v), fold.rankOfVirtual(v ^ distance), kRecursiveDoublingDataFlag);
    for (int v = 0; v < fold.active; ++v)
      b.waitForAll(fold.rankOfVirtual(v), fold.rankOfVirtual(v ^ distance), kRecursiveDoublingDataFlag);
    std::vector<int> updated = current;
    for (int v = 0; v < fold.active; ++v) {
      const int r = fold.rankOfVirtual(v);
      const int lower = fold.rankOfVirtual(v & ~distance);
      const int upper = fold.rankOfVirtual(v | distance);
      const BufferRef sources[2] = {scratchOf(lower, current[static_cast<std::size_t>(lower)]),
                                    scratchOf(upper, current[static_cast<std::size_t>(upper)])};
      b.reduce(r, kRecursiveDoublingChunk, sources, direct_to_output ? outputOf(r) : scratchOf(r, next_slot), last);
      updated[static_cast<std::size_t>(r)] = next_slot;
    }
    current = updated;
    ++next_slot;
  }
  if (fold.extra > 0) {
    for (int v = 0; v < fold.active; ++v) {
      const int r = fold.rankOfVirtual(v);
      b.copy(r, kRecursiveDoublingChunk, scratchOf(r, current[static_cast<std::size_t>(r)]), outputOf(r));
    }
    for (int r = 0; r < 2 * fold.extra; r += 2) b.signal(r, r + 1, kRecursiveDoublingDataFlag);
    for (int r = 0; r < 2 * fold.extra; r += 2) {
      b.waitForAll(r + 1, r, kRecursiveDoublingDataFlag);
      b.copy(r + 1, kRecursiveDoublingChunk, scratchOf(r, current[static_cast<std::size_t>(r)]), outputOf(r + 1));
    }
  }
  return b.finish("recursive doubling over " + std::to_string(fold.active) + " ranks" +
                  (fold.extra ? " (+" + std::to_string(fold.extra) + " folded)" : std::string()));
}

}  // namespace peerreduce
