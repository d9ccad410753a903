// Copy-engine two-shot: two-shot's data flow with its transfers moved by copy engines, pipelined over
// stages so that copies overlap reductions.
//
// Why: a large two-shot is bounded by the multiprocessors' store rate to peers; copy engines move more
// over the same links and leave the multiprocessors to reduce. Why this direction for each half:
// - the scatter pushes: rank r's copy engine writes r's input chunk into the owner's scratch, and r's
//   signal follows the copy on r's own queue, so the owner learns of the data with no round trip;
// - the gather pulls: rank r's copy engine reads each owner's result into r's own output, since a peer's
//   output is a user buffer nobody else can address (a push would land in scratch and need one more
//   local pass). r's done signal to the owner, after its last pull, is what frees the owner's result.
// Pushing into a peer's memory needs one handshake the pulling plans do not: the entry fence orders a
// rank's writes after earlier operations' accesses to *its own* memory (every reader's done signal goes
// to the owner), not to the owner's it writes. So each owner first tells every writer that its scratch
// is free (sent after its own entry fence, which waited for every earlier reader), and a writer pushes
// only after hearing it from every owner: one signal round, the price of pushing.
// The block splits into `kCopyEngineTwoShotStages` x n chunks: chunk s * n + c is stage s of owner c.
// Round s reduces stage s, scatters stage s + 1 and gathers stage s - 1, with no dependency between
// the three, so a GPU (and the cost model's phase) runs them at once. The owner folds every rank's
// chunk in rank order (its own straight from its input), exactly two-shot's expression: the same bits.
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kCopyEngineTwoShotReadyFlag = kFirstAlgorithmFlag;  // "my chunk of your next stage is in your scratch"
// From an owner: first "my scratch is yours to write" (once per operation), then "my result of the
// next stage is in my scratch" (once per stage). One counter serves both, as they come in that order.
constexpr int kOwnerFlag = kCopyEngineTwoShotReadyFlag + 1;
constexpr int kCopyEngineTwoShotNumFlags = kOwnerFlag + 1;

// Scratch of owner c: per stage, one slot per other rank (in rank order, c skipped) and a result slot.
class StageSlots {
 public:
  explicit StageSlots(int n) : n_(n) {}
  int chunk(int stage, int owner) const { return stage * n_ + owner; }
  int inbound(int stage, int writer, int owner) const { return stage * n_ + (writer < owner ? writer : writer - 1); }
  int result(int stage) const { return stage * n_ + n_ - 1; }
  int slots() const { return kCopyEngineTwoShotStages * n_; }

 private:
  int n_;
};

// Rank r's copy engine writes its input chunk of `stage` into every other owner's scratch, starting
// with its successor so that at any moment the ranks' copies go to different owners.
void scatterStage(PlanBuilder& b, const StageSlots& slots, int r, int stage) {
  const int n = b.worldSize();
  for (int j = 1; j < n; ++j) {
    const int owner = (r + j) % n;
    b.copyEngineCopy(r, slots.chunk(stage, owner), inputOf(r), scratchOf(owner, slots.inbound(stage, r, owner)));
  }
}

void gatherStage(PlanBuilder& b, const StageSlots& slots, int r, int stage) {
  const int n = b.worldSize();
  for (int j = 0; j < n; ++j) {
    const int owner = (r + j) % n;
    const BufferRef result = scratchOf(owner, slots.result(stage));
    if (owner == r) {
      b.copy(r, slots.chunk(stage, owner), result, outputOf(r));  // local: the multiprocessors' copy
    } else {
      b.copyEngineCopy(r, slots.chunk(stage, owner), result, outputOf(r));
    }
  }
}
}  // namespace

Plan buildCopyEngineTwoShotPlan(int n, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kCopyEngineTwoShot, in_place);
  constexpr int kStages = kCopyEngineTwoShotStages;
  PlanBuilder b(Algorithm::kCopyEngineTwoShot, n, kStages * n, kCopyEngineTwoShotNumFlags, in_place);
  const StageSlots slots(n);
  auto signalOthers = [&](int r, int flag) {
    for (int q = 0; q < n; ++q) {
      if (q != r) b.signal(r, q, flag);
    }
  };
  for (int r = 0; r < n; ++r) signalOthers(r, kOwnerFlag);  // "my scratch is free"
  for (int r = 0; r < n; ++r) {
    for (int q = 0; q < n; ++q) {
      if (q != r) b.waitForAll(r, q, kOwnerFlag);
    }
  }
  for (int r = 0; r < n; ++r) {
    scatterStage(b, slots, r, 0);
    signalOthers(r, kCopyEngineTwoShotReadyFlag);
  }
  // Round s: every rank's waits first, then every rank's work, so each wait counts exactly the signals
  // of the stages before it (waitForAll waits for every signal emitted so far).
  for (int s = 0; s <= kStages; ++s) {
    for (int r = 0; r < n; ++r) {
      for (int q = 0; q < n; ++q) {
        if (q == r) continue;
        if (s < kStages) b.waitForAll(r, q, kCopyEngineTwoShotReadyFlag);
        if (s > 0) b.waitForAll(r, q, kOwnerFlag);
      }
    }
    for (int r = 0; r < n; ++r) {
      if (s < kStages) {
        std::vector<BufferRef> sources;
        for (int q = 0; q < n; ++q) sources.push_back(q == r ? inputOf(r) : scratchOf(r, slots.inbound(s, q, r)));
        b.reduce(r, slots.chunk(s, r), sources, scratchOf(r, slots.result(s)), true);
      }
      if (s + 1 < kStages) scatterStage(b, slots, r, s + 1);
      if (s > 0) gatherStage(b, slots, r, s - 1);
      if (s < kStages) signalOthers(r, kOwnerFlag);
      if (s + 1 < kStages) signalOthers(r, kCopyEngineTwoShotReadyFlag);
    }
  }
  return b.finish("copy-engine two-shot: " + std::to_string(kStages) + " stages; copy engines scatter to and gather " +
                  "from the " + std::to_string(n) + " owners while owners reduce");
}

}  // namespace peerreduce
