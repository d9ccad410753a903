// Which GPU kernel runs a rank's program: a fused kernel (kernels/fused_kernels.cu) when the program is
// exactly the one-shot or two-shot program that lib/algorithms builds, else the plan interpreter.
//
// The check is structural and complete: every step's kind, chunk, buffers, sources in fold order,
// peers, flags and wait values must be the shape's, so a fused kernel never runs a program it does
// not implement (a changed builder falls back to the interpreter instead of running something else).
// Host-only, so it is unit-tested without a GPU (tests/lib/fused_shape_test.cc).
#pragma once

#include <cstdint>

#include "peerreduce/plan.h"

namespace peerreduce::gpu {

enum class FusedKind : std::int32_t { kNone = 0, kOneShot = 1, kTwoShot = 2 };

struct FusedShape {
  FusedKind kind = FusedKind::kNone;
  std::int32_t ready_flag = 0;
  std::int32_t result_flag = 0;
  std::uint32_t ready_wait_step = 0;   // index of the first ready wait in the program
  std::uint32_t result_wait_step = 0;  // two-shot: index of the first result wait
};

FusedShape matchFusedShape(const Plan& plan, int rank);

}  // namespace peerreduce::gpu
