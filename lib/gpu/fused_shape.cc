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
  void expectReduceAcrossRanks(int chunk, int slot, BufferRef to, int n) {
    const Step* s = next();
    if (!s || s->kind != StepKind::kReduce || !s->finalize || s->chunk != chunk || !(s->dst == to) ||
        s->src_count != static_cast<std::uint32_t>(n)) {
      ok_ = false;
      return;
    }
    for (int q = 0; q < n; ++q) {
      if (!(source(*s, q) == BufferRef{q, BufferKind::kScratch, slot})) ok_ = false;
    }
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
  void expectWaitsForEveryPeer(int n, std::int32_t flag) {
    for (int q = 0; q < n; ++q) {
      if (q == rank_) continue;
      const Step* s = next();
      if (!s || s->kind != StepKind::kWait || s->peer != q || s->flag != flag || s->value != 1) ok_ = false;
    }
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
  shape.ready_flag = w.expectSignalsToEveryPeer(n);
  shape.ready_wait_step = w.index();
  w.expectWaitsForEveryPeer(n, shape.ready_flag);
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
  shape.ready_flag = w.expectSignalsToEveryPeer(n);
  shape.ready_wait_step = w.index();
  w.expectWaitsForEveryPeer(n, shape.ready_flag);
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

}  // namespace

FusedShape matchFusedShape(const Plan& plan, int rank) {
  // The fused kernels are allreduces: every other collective runs in the plan interpreter.
  if (plan.collective != Collective::kAllReduce || plan.world_size < 2 || rank < 0 || rank >= plan.world_size ||
      plan.programs.size() != static_cast<std::size_t>(plan.world_size)) {
    return FusedShape{};
  }
  if (plan.algorithm == Algorithm::kOneShot && plan.num_chunks == 1 && plan.scratch_slots >= 1)
    return oneShot(plan, rank);
  if (plan.algorithm == Algorithm::kTwoShot && plan.num_chunks == plan.world_size &&
      plan.scratch_slots >= plan.world_size + 1) {
    return twoShot(plan, rank);
  }
  return FusedShape{};
}

}  // namespace peerreduce::gpu
