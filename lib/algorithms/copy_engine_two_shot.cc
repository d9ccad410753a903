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
// Reducing from private slots (PlanRequest::reduce_from_private, for host-staged worlds): scratch is
// then pinned host memory, and multiprocessors reading it lose a fifth to two fifths of the PCIe rate
// the copy engines get (docs/ALGORITHMS.md, GPUs without peer access). So the owner's copy engine first
// brings the n-1 inbound shards down into private slots (device memory), the owner reduces from there
// straight into its output, and its copy engine takes the result up to its scratch for the others to
// pull. Per GPU and operation of S bytes: up S (the scatter's (n-1)/n S and the result's S/n), down
// 2 (n-1)/n S, every byte by a copy engine; in place the reduction still reads the owner's input chunk
// before it writes the same chunk of the output, element by element.
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
// With private slots, each owner also has n-1 of them per stage, after every shared slot.
class StageSlots {
 public:
  explicit StageSlots(int n) : n_(n) {}
  int chunk(int stage, int owner) const { return stage * n_ + owner; }
  int inbound(int stage, int writer, int owner) const { return stage * n_ + (writer < owner ? writer : writer - 1); }
  int result(int stage) const { return stage * n_ + n_ - 1; }
  int slots() const { return kCopyEngineTwoShotStages * n_; }
  int downloaded(int stage, int writer, int owner) const {
    return slots() + stage * (n_ - 1) + (writer < owner ? writer : writer - 1);
  }

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

// `own_result_in_output`: the owner reduced straight into its output (reduce_from_private), so only the
// others' results are pulled.
void gatherStage(PlanBuilder& b, const StageSlots& slots, int r, int stage, bool own_result_in_output) {
  const int n = b.worldSize();
  for (int j = 0; j < n; ++j) {
    const int owner = (r + j) % n;
    const BufferRef result = scratchOf(owner, slots.result(stage));
    if (owner != r) {
      b.copyEngineCopy(r, slots.chunk(stage, owner), result, outputOf(r));
    } else if (!own_result_in_output) {
      b.copy(r, slots.chunk(stage, owner), result, outputOf(r));  // local: the multiprocessors' copy
    }
  }
}

// The owner's copy engine brings stage `stage`'s inbound shards from its scratch into private slots.
void downloadStage(PlanBuilder& b, const StageSlots& slots, int r, int stage) {
  const int n = b.worldSize();
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    b.copyEngineCopy(r, slots.chunk(stage, r), scratchOf(r, slots.inbound(stage, q, r)),
                     scratchOf(r, slots.downloaded(stage, q, r)));
  }
}

// Owner r folds every rank's chunk of `stage` in rank order, its own straight from its input, the
// others' from `inbound` (its scratch, or its private slots), into `dst`.
void reduceStage(PlanBuilder& b, const StageSlots& slots, int r, int stage, bool from_private, BufferRef dst) {
  const int n = b.worldSize();
  std::vector<BufferRef> sources;
  for (int q = 0; q < n; ++q) {
    if (q == r) {
      sources.push_back(inputOf(r));
    } else {
      sources.push_back(scratchOf(r, from_private ? slots.downloaded(stage, q, r) : slots.inbound(stage, q, r)));
    }
  }
  b.reduce(r, slots.chunk(stage, r), sources, dst, true);
}
// The private form's rounds. Round s brings stage s down, pushes stage s + 1 up, takes the result of
// stage s - 1 up and pulls the results of stage s - 2 down, all in one part (they touch different
// memory), so both directions of every rank's PCIe link stay busy; then it reduces stage s. A result
// leaves one round after its reduction so that its upload overlaps the next downloads instead of
// following the reduction alone; the gather follows one round later still.
template <typename SignalOthers>
void privateRounds(PlanBuilder& b, const StageSlots& slots, const SignalOthers& signalOthers) {
  const int n = b.worldSize();
  constexpr int kStages = kCopyEngineTwoShotStages;
  for (int s = 0; s <= kStages + 1; ++s) {
    for (int r = 0; r < n; ++r) {
      for (int q = 0; q < n; ++q) {
        if (q == r) continue;
        if (s < kStages) b.waitForAll(r, q, kCopyEngineTwoShotReadyFlag);  // stage s is in r's scratch
        if (s >= 2) b.waitForAll(r, q, kOwnerFlag);                        // q's result of stage s - 2 is up
      }
    }
    for (int r = 0; r < n; ++r) {
      if (s < kStages) downloadStage(b, slots, r, s);
      if (s + 1 < kStages) scatterStage(b, slots, r, s + 1);
      if (s >= 1 && s <= kStages)
        b.copyEngineCopy(r, slots.chunk(s - 1, r), outputOf(r), scratchOf(r, slots.result(s - 1)));
      if (s >= 2) gatherStage(b, slots, r, s - 2, true);
      if (s < kStages) reduceStage(b, slots, r, s, true, outputOf(r));
      if (s >= 1 && s <= kStages) signalOthers(r, kOwnerFlag);
      if (s + 1 < kStages) signalOthers(r, kCopyEngineTwoShotReadyFlag);
    }
  }
}
}  // namespace

Plan buildCopyEngineTwoShotPlan(int n, bool in_place, bool reduce_from_private) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kCopyEngineTwoShot, in_place);
  constexpr int kStages = kCopyEngineTwoShotStages;
  PlanBuilder b(Algorithm::kCopyEngineTwoShot, n, kStages * n, kCopyEngineTwoShotNumFlags, in_place);
  const StageSlots slots(n);
  if (reduce_from_private) b.keepPrivateFrom(slots.slots());
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
  if (reduce_from_private) {
    privateRounds(b, slots, signalOthers);
  } else {
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
        if (s < kStages) reduceStage(b, slots, r, s, false, scratchOf(r, slots.result(s)));
        if (s + 1 < kStages) scatterStage(b, slots, r, s + 1);
        if (s > 0) gatherStage(b, slots, r, s - 1, false);
        if (s < kStages) signalOthers(r, kOwnerFlag);
        if (s + 1 < kStages) signalOthers(r, kCopyEngineTwoShotReadyFlag);
      }
    }
  }
  const std::string stages = "copy-engine two-shot: " + std::to_string(kStages) + " stages; ";
  const std::string owners = std::to_string(n) + " owners";
  if (reduce_from_private) {
    return b.finish(stages + "the " + owners + " reduce from private slots their copy engines filled");
  }
  return b.finish(stages + "copy engines scatter to and gather from the " + owners + " while owners reduce");
}

}  // namespace peerreduce
