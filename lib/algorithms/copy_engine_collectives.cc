// All-gather, broadcast and reduce-scatter whose transfers between ranks are copy-engine copies, pipelined
// over stages: the gather half (all-gather, broadcast) and the scatter half (reduce-scatter) of the
// copy-engine two-shot, whose name ("copy-engine-two-shot") they carry.
//
// Reduce-scatter pushes instead: writer r's copy engine puts its chunk of owner q's block into q's
// scratch (one inbound slot per writer and stage) and signals, and the owner folds every rank's chunk in
// rank order (its own straight from its input) into its output, the direct plan's expression, so the
// same bits. Pushing into an owner's memory needs the owners' "scratch free" signal first, once per
// operation (copy_engine_two_shot.cc says why). Round s folds stage s while the copy engines push s + 1.
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
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kPublishedFlag = kFirstAlgorithmFlag;  // "stage s of my block is in my scratch"
constexpr int kNumFlags = kPublishedFlag + 1;
// Reduce-scatter: a writer's "my chunk of your next stage is in your scratch", and an owner's "my scratch
// is yours to write" (once per operation).
constexpr int kPushedFlag = kFirstAlgorithmFlag;
constexpr int kScratchFreeFlag = kPushedFlag + 1;
constexpr int kReduceScatterNumFlags = kScratchFreeFlag + 1;
constexpr int kStages = kCopyEngineTwoShotStages;

int chunkOf(int block, int stage) { return block * kStages + stage; }

// `rank` signals every other rank on `flag` / waits for every other rank's signals on it so far.
void signalOthers(PlanBuilder& b, int rank, int flag) {
  for (int q = 0; q < b.worldSize(); ++q) {
    if (q != rank) b.signal(rank, q, flag);
  }
}
void waitForOthers(PlanBuilder& b, int rank, int flag) {
  for (int q = 0; q < b.worldSize(); ++q) {
    if (q != rank) b.waitForAll(rank, q, flag);
  }
}

// `owner` copies stage `stage` of its block into its scratch slot and its own output, then tells
// `readers` (every rank but itself) that it is there.
void publish(PlanBuilder& b, int owner, int block, int stage, bool to_output) {
  b.copy(owner, chunkOf(block, stage), inputOf(owner), scratchOf(owner, stage));
  // In place the same memory: the copy leaves it as it is.
  if (to_output) b.copy(owner, chunkOf(block, stage), inputOf(owner), outputOf(owner));
  signalOthers(b, owner, kPublishedFlag);
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
      waitForOthers(b, r, kPublishedFlag);
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

Plan buildReduceScatterCopyEnginePlan(int n, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kCopyEngineTwoShot, in_place, Collective::kReduceScatter);
  PlanBuilder b(Algorithm::kCopyEngineTwoShot, n, kStages, kReduceScatterNumFlags, in_place,
                Collective::kReduceScatter);
  // Owner q's inbound slot for writer w's chunk of stage s: n - 1 per stage, in rank order, q skipped.
  const auto inbound = [n](int stage, int writer, int owner) {
    return stage * (n - 1) + (writer < owner ? writer : writer - 1);
  };
  const auto push = [&](int r, int stage) {
    for (int j = 1; j < n; ++j) {
      const int owner = (r + j) % n;  // successor first: at any moment the ranks write different owners
      b.copyEngineCopy(r, chunkOf(owner, stage), inputOf(r), scratchOf(owner, inbound(stage, r, owner)));
    }
    signalOthers(b, r, kPushedFlag);
  };
  for (int r = 0; r < n; ++r) {
    signalOthers(b, r, kScratchFreeFlag);
  }
  for (int r = 0; r < n; ++r) {
    waitForOthers(b, r, kScratchFreeFlag);
  }
  for (int r = 0; r < n; ++r) push(r, 0);
  for (int s = 0; s < kStages; ++s) {
    for (int r = 0; r < n; ++r) {
      waitForOthers(b, r, kPushedFlag);
    }
    for (int r = 0; r < n; ++r) {
      std::vector<BufferRef> sources;
      for (int q = 0; q < n; ++q) sources.push_back(q == r ? inputOf(r) : scratchOf(r, inbound(s, q, r)));
      b.reduce(r, chunkOf(r, s), sources, outputOf(r), true);
      if (s + 1 < kStages) push(r, s + 1);
    }
  }
  return b.finish("reduce-scatter by copy engines: " + std::to_string(kStages) + " stages; every rank pushes its " +
                  "chunks into the " + std::to_string(n - 1) + " other owners' scratch while owners fold");
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
