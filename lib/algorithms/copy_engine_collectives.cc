// All-gather and broadcast whose transfers between ranks are copy-engine copies, pipelined over stages:
// the gather half of the copy-engine two-shot (its name, "copy-engine-two-shot", for these collectives).
//
// Why: at large sizes these collectives are bound by the link, and a copy engine moves more over the
// same link than the multiprocessors' loads do (4 x H200: 393 GB/s to one peer by copy engine), leaving
// the multiprocessors free. Why pulls: a rank's copy engine reads each owner's published chunk straight
// into its own output, a user buffer no peer can address, so nothing needs a second local pass; the
// owner publishes each chunk of its block into its scratch with the multiprocessors (a local copy at
// device-memory speed) one stage ahead, so publishing stage s + 1 overlaps the pulls of stage s. The
// owner's done signal comes from every reader after its last pull (PlanBuilder::finish), which is what
// frees the scratch for the next operation; pulls read only the owner's memory, so unlike pushes they
// need no "scratch free" handshake. Every output byte is a copy of its source's bits.
// The block splits into kCopyEngineTwoShotStages chunks: chunk index block * stages + s, scratch slot s.
#include <string>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kPublishedFlag = kFirstAlgorithmFlag;  // "stage s of my block is in my scratch"
constexpr int kNumFlags = kPublishedFlag + 1;
constexpr int kStages = kCopyEngineTwoShotStages;

int chunkOf(int block, int stage) { return block * kStages + stage; }

// `owner` copies stage `stage` of its block into its scratch slot and its own output, then tells
// `readers` (every rank but itself) that it is there.
void publish(PlanBuilder& b, int owner, int block, int stage, bool to_output) {
  b.copy(owner, chunkOf(block, stage), inputOf(owner), scratchOf(owner, stage));
  // In place the same memory: the copy leaves it as it is.
  if (to_output) b.copy(owner, chunkOf(block, stage), inputOf(owner), outputOf(owner));
  for (int q = 0; q < b.worldSize(); ++q) {
    if (q != owner) b.signal(owner, q, kPublishedFlag);
  }
}
}  // namespace

Plan buildAllGatherCopyEnginePlan(int n, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kCopyEngineTwoShot, in_place, Collective::kAllGather);
  PlanBuilder b(Algorithm::kCopyEngineTwoShot, n, kStages, kNumFlags, in_place, Collective::kAllGather);
  for (int r = 0; r < n; ++r) publish(b, r, r, 0, true);
  // Round s: every rank's waits first (each counts the publications so far: stage s of every owner),
  // then every rank pulls stage s from each owner, starting with its successor so that at any moment
  // the ranks read different owners, and publishes its stage s + 1.
  for (int s = 0; s < kStages; ++s) {
    for (int r = 0; r < n; ++r) {
      for (int q = 0; q < n; ++q) {
        if (q != r) b.waitForAll(r, q, kPublishedFlag);
      }
    }
    for (int r = 0; r < n; ++r) {
      for (int j = 1; j < n; ++j) {
        const int owner = (r + j) % n;
        b.copyEngineCopy(r, chunkOf(owner, s), scratchOf(owner, s), outputOf(r));
      }
      if (s + 1 < kStages) publish(b, r, r, s + 1, true);
    }
  }
  return b.finish("all-gather by copy engines: " + std::to_string(kStages) + " stages; every rank pulls the " +
                  std::to_string(n - 1) + " other blocks as their owners publish them");
}

Plan buildBroadcastCopyEnginePlan(int n, int root, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kCopyEngineTwoShot, in_place, Collective::kBroadcast);
  PlanBuilder b(Algorithm::kCopyEngineTwoShot, n, kStages, kNumFlags, in_place, Collective::kBroadcast, root);
  publish(b, root, 0, 0, true);
  for (int s = 0; s < kStages; ++s) {
    for (int r = 0; r < n; ++r) {
      if (r != root) b.waitForAll(r, root, kPublishedFlag);
    }
    for (int r = 0; r < n; ++r) {
      if (r != root) b.copyEngineCopy(r, chunkOf(0, s), scratchOf(root, s), outputOf(r));
    }
    if (s + 1 < kStages) publish(b, root, 0, s + 1, true);
  }
  return b.finish("broadcast by copy engines from rank " + std::to_string(root) + ": " + std::to_string(kStages) +
                  " stages; the " + std::to_string(n - 1) + " others pull each as the root publishes it");
}

}  // namespace peerreduce
