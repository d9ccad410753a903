// Which GPU kernel runs a rank's program: a fused kernel (kernels/fused_kernels.cu) when the program is
// exactly the allreduce one-shot or two-shot program that lib/algorithms builds, a collective's line
// kernel (kernels/collective_line_kernels.cu) when the plan is exactly the direct (one-shot) plan of
// reduce-scatter, all-gather or broadcast, else the plan interpreter.
//
// The check is structural and complete: every step's kind, chunk, buffers, sources in fold order,
// peers, flags and wait values must be the shape's, so a fused kernel never runs a program it does
// not implement (a changed builder falls back to the interpreter instead of running something else).
// The direct plans of the other collectives are checked on every rank's program, not only the caller's:
// their kernels' protocol involves every rank (a broadcast's root and receivers differ), so every rank
// derives the same answer from the same plan.
// Host-only, so it is unit-tested without a GPU (tests/lib/fused_shape_test.cc).
#pragma once

#include <cstdint>

#include "peerreduce/plan.h"

namespace peerreduce::gpu {

// kOneShot and kTwoShot are allreduce shapes; the others are the direct plans of the other collectives,
// which only their line kernels take (kernel_choice.h): their pull form is the interpreter's.
enum class FusedKind : std::int32_t {
  kNone = 0,
  kOneShot = 1,
  kTwoShot = 2,
  kReduceScatterDirect = 3,
  kAllGatherDirect = 4,
  kBroadcastDirect = 5,
};

struct FusedShape {
  FusedKind kind = FusedKind::kNone;
  std::int32_t ready_flag = 0;
  std::int32_t result_flag = 0;
  std::uint32_t ready_wait_step = 0;   // index of the first ready wait in the program (a broadcast's root
                                       // has none: 0)
  std::uint32_t result_wait_step = 0;  // two-shot: index of the first result wait
};

FusedShape matchFusedShape(const Plan& plan, int rank);

}  // namespace peerreduce::gpu
