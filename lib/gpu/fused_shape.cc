#include "gpu/fused_shape.h"

#include <vector>

namespace peerreduce::gpu {
namespace {

// Walks a program step by step, skipping done signals (the kernels send those once per rank at the
// end of a launch, as the interpreter does). Each expect* consumes one step or marks a mismatch.
class Walker {
 public:
  Walker(const Plan& plan, int rank) : program_(plan.programs[static_cast<std::size_t>(rank)]), rank_(rank) {}

  bool ok() const { return ok_; }
  std::uint32_t index() {
    skipDone();
    return static_cast<std::uint32_t>(at_);
  }
  bool atEnd() {
    skipDone();
    return at_ == program_.steps.size();
  }

  void expectCopy(int chunk, BufferRef from, BufferRef to) {
    const Step* s = next();
    if (!s || s->kind != StepKind::kCopy || s->chunk != chunk || !(s->dst == to) || s->src_count != 1 ||
        !(source(*s, 0) == from)) {
      ok_ = false;
    }
  }
  // The copying collectives' first steps: chunk `chunk` of the input into scratch slot 0 (published for
  // peers), then into the output (the rank's own copy).
  void expectPublishAndKeep(int chunk) {
    expectCopy(chunk, BufferRef{rank_, BufferKind::kInput, 0}, BufferRef{rank_, BufferKind::kScratch, 0});
    expectCopy(chunk, BufferRef{rank_, BufferKind::kInput, 0}, BufferRef{rank_, BufferKind::kOutput, 0});
  }
  // A finalising reduction of chunk `chunk` into `to` whose n sources, in fold order, are sourceOf(q).
  template <typename SourceOf>
  void expectReduce(int chunk, BufferRef to, int n, const SourceOf& sourceOf) {
    const Step* s = next();
    if (!s || s->kind != StepKind::kReduce || !s->finalize || s->chunk != chunk || !(s->dst == to) ||
        s->src_count != static_cast<std::uint32_t>(n)) {
      ok_ = false;
      return;
    }
    for (int q = 0; q < n; ++q) {
      if (!(source(*s, q) == sourceOf(q))) ok_ = false;
    }
  }
  void expectReduceAcrossRanks(int chunk, int slot, BufferRef to, int n) {
    expectReduce(chunk, to, n, [&](int q) { return BufferRef{q, BufferKind::kScratch, slot}; });
  }
  // A signal of `flag` to every peer, in rank order; returns the flag (taken from the first signal).
  std::int32_t expectSignalsToEveryPeer(int n) {
    std::int32_t flag = -1;
    for (int q = 0; q < n; ++q) {
      if (q == rank_) continue;
      const Step* s = next();
      if (!s || s->kind != StepKind::kSignal || s->peer != q || (flag >= 0 && s->flag != flag)) {
        ok_ = false;
        return -1;
      }
      flag = s->flag;
    }
    return flag;
  }
  // The one synchronisation round of a direct plan: a signal to every peer, then a wait for every peer,
  // on one flag; records the flag and where the waits begin in `shape`.
  void expectReadyRound(int n, FusedShape& shape) {
    shape.ready_flag = expectSignalsToEveryPeer(n);
    shape.ready_wait_step = index();
    expectWaitsForEveryPeer(n, shape.ready_flag);
  }
  void expectWaitsForEveryPeer(int n, std::int32_t flag) {
    for (int q = 0; q < n; ++q) {
      if (q != rank_) expectWait(q, flag);
    }
  }
  // One wait for the first signal of `flag` from `peer`.
  void expectWait(int peer, std::int32_t flag) {
    const Step* s = next();
    if (!s || s->kind != StepKind::kWait || s->peer != peer || s->flag != flag || s->value != 1) ok_ = false;
  }

 private:
  void skipDone() {
    while (at_ < program_.steps.size() && program_.steps[at_].kind == StepKind::kSignal &&
           program_.steps[at_].flag == kDoneFlag) {
      ++at_;
    }
  }
  const Step* next() {
    skipDone();
    if (!ok_ || at_ >= program_.steps.size()) {
      ok_ = false;
      return nullptr;
    }
    return &program_.steps[at_++];
  }
  BufferRef source(const Step& s, int i) const {
    const std::size_t k = s.src_begin + static_cast<std::size_t>(i);
    return k < program_.sources.size() ? program_.sources[k] : BufferRef{-1, BufferKind::kScratch, -1};
  }

  const RankProgram& program_;
  int rank_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

FusedShape oneShot(const Plan& plan, int r) {
  const int n = plan.world_size;
  Walker w(plan, r);
  FusedShape shape;
  w.expectCopy(0, BufferRef{r, BufferKind::kInput, 0}, BufferRef{r, BufferKind::kScratch, 0});
  w.expectReadyRound(n, shape);
  w.expectReduceAcrossRanks(0, 0, BufferRef{r, BufferKind::kOutput, 0}, n);
  if (!w.ok() || !w.atEnd() || shape.ready_flag == kDoneFlag) return FusedShape{};
  shape.kind = FusedKind::kOneShot;
  return shape;
}

FusedShape twoShot(const Plan& plan, int r) {
  const int n = plan.world_size;
  Walker w(plan, r);
  FusedShape shape;
  for (int c = 0; c < n; ++c)
    w.expectCopy(c, BufferRef{r, BufferKind::kInput, 0}, BufferRef{r, BufferKind::kScratch, c});
  w.expectReadyRound(n, shape);
  w.expectReduceAcrossRanks(r, r, BufferRef{r, BufferKind::kScratch, n}, n);
  shape.result_flag = w.expectSignalsToEveryPeer(n);
  shape.result_wait_step = w.index();
  w.expectWaitsForEveryPeer(n, shape.result_flag);
  for (int c = 0; c < n; ++c)
    w.expectCopy(c, BufferRef{c, BufferKind::kScratch, n}, BufferRef{r, BufferKind::kOutput, 0});
  if (!w.ok() || !w.atEnd() || shape.ready_flag == shape.result_flag || shape.ready_flag == kDoneFlag ||
      shape.result_flag == kDoneFlag) {
    return FusedShape{};
  }
  shape.kind = FusedKind::kTwoShot;
  return shape;
}

// Reduce-scatter's direct plan (lib/algorithms/reduce_scatter.cc), rank r: publish every block but its
// own in the scratch slot of that block's rank, signal every peer, wait for every peer, and fold block r
// of every rank in rank order (its own term straight from its input) into the output.
FusedShape reduceScatterDirect(const Plan& plan, int r) {
  const int n = plan.world_size;
  Walker w(plan, r);
  FusedShape shape;
  for (int block = 0; block < n; ++block) {
    if (block != r) w.expectCopy(block, BufferRef{r, BufferKind::kInput, 0}, BufferRef{r, BufferKind::kScratch, block});
  }
  w.expectReadyRound(n, shape);
  w.expectReduce(r, BufferRef{r, BufferKind::kOutput, 0}, n, [&](int q) {
    return q == r ? BufferRef{r, BufferKind::kInput, 0} : BufferRef{q, BufferKind::kScratch, r};
  });
  if (!w.ok() || !w.atEnd() || shape.ready_flag == kDoneFlag) return FusedShape{};
  shape.kind = FusedKind::kReduceScatterDirect;
  return shape;
}

// All-gather's direct plan (lib/algorithms/all_gather.cc), rank r: publish its block in slot 0 and copy
// it into its own block of the output, signal every peer, wait for every peer, copy block q from q's
// slot 0 for every peer q in rank order.
FusedShape allGatherDirect(const Plan& plan, int r) {
  const int n = plan.world_size;
  Walker w(plan, r);
  FusedShape shape;
  w.expectPublishAndKeep(r);
  w.expectReadyRound(n, shape);
  for (int q = 0; q < n; ++q) {
    if (q != r) w.expectCopy(q, BufferRef{q, BufferKind::kScratch, 0}, BufferRef{r, BufferKind::kOutput, 0});
  }
  if (!w.ok() || !w.atEnd() || shape.ready_flag == kDoneFlag) return FusedShape{};
  shape.kind = FusedKind::kAllGatherDirect;
  return shape;
}

// Broadcast's direct plan (lib/algorithms/broadcast.cc): the root publishes its input in slot 0, copies
// it into its output and signals every peer; every other rank waits for the root and copies its slot 0.
FusedShape broadcastDirect(const Plan& plan, int r) {
  const int n = plan.world_size;
  const int root = plan.root;
  Walker w(plan, r);
  FusedShape shape;
  if (r == root) {
    w.expectPublishAndKeep(0);
    shape.ready_flag = w.expectSignalsToEveryPeer(n);
  } else {
    shape.ready_wait_step = w.index();
    // The flag is the one the root's signals use (checked against it by the caller).
    const std::vector<Step>& steps = plan.programs[static_cast<std::size_t>(r)].steps;
    const std::int32_t flag = shape.ready_wait_step < steps.size() ? steps[shape.ready_wait_step].flag : -1;
    w.expectWait(root, flag);
    w.expectCopy(0, BufferRef{root, BufferKind::kScratch, 0}, BufferRef{r, BufferKind::kOutput, 0});
    shape.ready_flag = flag;
  }
  if (!w.ok() || !w.atEnd() || shape.ready_flag == kDoneFlag || shape.ready_flag < 0) return FusedShape{};
  shape.kind = FusedKind::kBroadcastDirect;
  return shape;
}

// The direct plan of a collective other than allreduce, matched on every rank's program with one flag
// throughout (so every rank reaches the same verdict from the same plan); `rank`'s shape, or kNone.
FusedShape matchDirectCollective(const Plan& plan, int rank) {
  const int n = plan.world_size;
  if ((plan.algorithm != Algorithm::kOneShot && plan.algorithm != Algorithm::kUser) || plan.num_chunks != 1 ||
      plan.num_blocks != blocksOf(plan.collective, n) || plan.root < 0 || plan.root >= n) {
    return FusedShape{};
  }
  FusedShape (*match)(const Plan&, int) = nullptr;
  switch (plan.collective) {
    case Collective::kReduceScatter:
      if (plan.scratch_slots >= n) match = reduceScatterDirect;
      break;
    case Collective::kAllGather:
      if (plan.scratch_slots >= 1) match = allGatherDirect;
      break;
    case Collective::kBroadcast:
      if (plan.scratch_slots >= 1) match = broadcastDirect;
      break;
    case Collective::kAllReduce:
      break;
  }
  if (match == nullptr) return FusedShape{};
  FusedShape mine;
  std::int32_t flag = -1;
  for (int r = 0; r < n; ++r) {
    const FusedShape shape = match(plan, r);
    if (shape.kind == FusedKind::kNone || (r > 0 && shape.ready_flag != flag)) return FusedShape{};
    flag = shape.ready_flag;
    if (r == rank) mine = shape;
  }
  return mine;
}

// A plan file's allreduce: a shipped shape only where every rank's program has it with the same flags. A
// file may give ranks programs of different shapes, and the kernels' protocols differ, so a shape found
// on one rank alone would make ranks run different kernels against each other.
FusedShape matchUserAllreduce(const Plan& plan, int rank) {
  const int n = plan.world_size;
  FusedShape (*match)(const Plan&, int) = nullptr;
  if (plan.num_chunks == 1 && plan.scratch_slots >= 1) match = oneShot;
  if (plan.num_chunks == n && plan.scratch_slots >= n + 1) match = twoShot;
  if (match == nullptr) return FusedShape{};
  FusedShape first;
  FusedShape mine;
  for (int r = 0; r < n; ++r) {
    const FusedShape shape = match(plan, r);
    if (shape.kind == FusedKind::kNone) return FusedShape{};
    if (r == 0) first = shape;
    if (shape.ready_flag != first.ready_flag || shape.result_flag != first.result_flag) return FusedShape{};
    if (r == rank) mine = shape;
  }
  return mine;
}

}  // namespace

FusedShape matchFusedShape(const Plan& plan, int rank) {
  if (plan.world_size < 2 || rank < 0 || rank >= plan.world_size ||
      plan.programs.size() != static_cast<std::size_t>(plan.world_size)) {
    return FusedShape{};
  }
  if (plan.collective != Collective::kAllReduce) return matchDirectCollective(plan, rank);
  if (plan.algorithm == Algorithm::kUser) return matchUserAllreduce(plan, rank);
  if (plan.algorithm == Algorithm::kOneShot && plan.num_chunks == 1 && plan.scratch_slots >= 1)
    return oneShot(plan, rank);
  if (plan.algorithm == Algorithm::kTwoShot && plan.num_chunks == plan.world_size &&
      plan.scratch_slots >= plan.world_size + 1) {
    return twoShot(plan, rank);
  }
  return FusedShape{};
}

}  // namespace peerreduce::gpu
