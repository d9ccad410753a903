// Broadcast two-shot: scatter, then all-gather, so that the root's buffer leaves the root once.
//
// The direct plan has n-1 ranks read the whole buffer from the root: where every GPU reaches the others
// through one port of its own (an NVSwitch), the root's port then carries (n-1) x the buffer while the
// others' ports idle. Here the buffer is cut into n-1 parts, one per receiver (every rank but the root):
// each receiver copies its part from the root's scratch into its own (the scatter: the root's port
// carries the buffer once), then copies the other parts from the receivers that hold them (the
// all-gather: each receiver's port carries (n-2)/(n-1) of the buffer). No arithmetic: every output
// element is the root's bits.
//
// Pipelined in `stages`: stage s is the s-th slice of the buffer, cut into the n-1 parts; chunk
// s (n-1) + k is part k of stage s, and it lives in scratch slot of the same index wherever it is. A
// receiver's round s copies its part of stage s from the root and gathers the parts of stage s-1 in one
// phase (no copy of the round reads what another writes), so the scatter of one stage runs beside the
// gathering of the one before it: stages + 1 rounds, each moving about 1/stages of the buffer through
// every port.
#include <string>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kBroadcastTwoShotReadyFlag =
    kFirstAlgorithmFlag;  // root: "stage s is in my scratch"; receiver: "my part of s is"
constexpr int kBroadcastTwoShotNumFlags = kBroadcastTwoShotReadyFlag + 1;
}  // namespace

Plan buildBroadcastTwoShotPlan(int n, int root, int stages, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kTwoShot, in_place, Collective::kBroadcast);
  if (n == 2) {
    // One receiver: the scatter is the whole broadcast and there is nothing to gather.
    Plan plan = buildBroadcastDirectPlan(n, root, in_place);
    plan.algorithm = Algorithm::kTwoShot;
    plan.description = "broadcast two-shot from " + std::to_string(root) + " over 2 ranks: the direct copy";
    return plan;
  }
  const int parts = n - 1;
  PlanBuilder b(Algorithm::kTwoShot, n, stages * parts, kBroadcastTwoShotNumFlags, in_place, Collective::kBroadcast,
                root);
  auto receiver = [&](int k) { return (root + 1 + k) % n; };
  auto chunk = [&](int stage, int k) { return stage * parts + k; };
  for (int round = 0; round <= stages; ++round) {
    const bool scatters = round < stages;  // this round takes stage `round` from the root
    const bool gathers = round > 0;        // and gathers stage `round - 1`
    if (scatters) {
      for (int k = 0; k < parts; ++k) b.copy(root, chunk(round, k), inputOf(root), scratchOf(root, chunk(round, k)));
      for (int k = 0; k < parts; ++k) b.signal(root, receiver(k), kBroadcastTwoShotReadyFlag);
      // After the signal, so the receivers start sooner; in place the same memory, left as it is.
      for (int k = 0; k < parts; ++k) b.copy(root, chunk(round, k), inputOf(root), outputOf(root));
    }
    // Every receiver's waits of the round before any of its signals: a wait then counts only the
    // signals of earlier rounds (PlanBuilder::waitForAll), the stage it gathers.
    for (int k = 0; k < parts; ++k) {
      const int self = receiver(k);
      if (scatters) b.waitForAll(self, root, kBroadcastTwoShotReadyFlag);
      for (int j = 0; gathers && j < parts; ++j) {
        if (j != k) b.waitForAll(self, receiver(j), kBroadcastTwoShotReadyFlag);
      }
    }
    for (int k = 0; k < parts; ++k) {
      const int self = receiver(k);
      if (scatters) b.copy(self, chunk(round, k), scratchOf(root, chunk(round, k)), scratchOf(self, chunk(round, k)));
      for (int j = 0; gathers && j < parts; ++j) {  // its own part too, from its own scratch
        const int c = chunk(round - 1, j);
        b.copy(self, c, scratchOf(receiver(j), c), outputOf(self));
      }
      for (int j = 0; scatters && j < parts; ++j) {
        if (j != k) b.signal(self, receiver(j), kBroadcastTwoShotReadyFlag);
      }
    }
  }
  return b.finish("broadcast two-shot from " + std::to_string(root) + ": scatter to " + std::to_string(parts) +
                  " ranks, all-gather among them, " + std::to_string(stages) + " pipelined stage" +
                  (stages == 1 ? "" : "s"));
}

}  // namespace peerreduce
