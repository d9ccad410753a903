// The plan text format: a Plan written by a person, one line per step (docs/PLANS.md has the grammar).
//
//   peerreduce-plan 1                 version line, first
//   name two-shot by hand             optional description (the rest of the line)
//   collective allreduce              allreduce | reduce-scatter | all-gather | broadcast
//   world 2                           ranks, 1..64
//   chunks 2                          chunks per block
//   slots 2                           scratch slots per rank
//   private 0                         optional: how many of the last slots are the rank's own (Plan::private_slots)
//   flags 2                           flag ids 0..flags-1 (0 is the done flag)
//   in-place no                       optional: yes when written for send == recv
//   rank 0                            then every rank in order, each with its steps
//     copy c0 [in0] -> s0.0
//     signal r1 flag 1
//     wait r1 flag 1 >= 1
//     reduce c0 [s0.0 s1.0] -> out0 final
//   ...
//   end                               required, so that a cut-off file is refused
//
// A step line is exactly what describeStep() prints (peerreduce/plan.h), so the verifier's and the
// simulator's messages quote steps the way the file spells them. The file is untrusted input: every size
// is bounded (the kMaxPlanText* limits), every field range-checked, and every error is kInvalidArgument
// naming the line and, inside a rank's section, the rank and the step. What the text cannot say is left to
// the verifier (who may touch whose memory, ordering, results): the parser checks form and ranges only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/status.h"

namespace peerreduce {

inline constexpr int kPlanTextVersion = 1;
// The largest file read: a 64-rank plan of the shipped algorithms prints to under 2 MiB.
inline constexpr std::size_t kMaxPlanTextBytes = std::size_t{16} << 20;
// Chunks per block and scratch slots per rank: beyond what any plan needs (the shipped ones use at most
// 4 x 64 chunks), small enough that the simulator's slots of one chunk each fit in memory.
inline constexpr int kMaxPlanTextChunks = 1024;
inline constexpr int kMaxPlanTextSlots = 4096;
// The GPU kernels hold three plan flags per writer (kernels/device_plan.h kMaxPlanFlags, tied to this by a
// static_assert in lib/gpu/device_values.h): a plan naming more could be verified and simulated but never
// run on a GPU, so the format refuses it.
inline constexpr int kMaxPlanTextFlags = 3;
// Sources of one reduce: every rank once plus one partial, the kernels' limit (gpu_transport.cc).
inline constexpr int kMaxPlanTextSources = kMaxWorldSize + 1;
// Steps per rank and in the whole plan: the verifier's work is O(steps x ranks).
inline constexpr std::size_t kMaxPlanTextStepsPerRank = std::size_t{1} << 16;
inline constexpr std::size_t kMaxPlanTextSteps = std::size_t{1} << 20;
// A wait cannot need more signals than the plan can send.
inline constexpr std::int64_t kMaxPlanTextWaitValue = static_cast<std::int64_t>(kMaxPlanTextSteps);
inline constexpr std::size_t kMaxPlanTextNameChars = 200;

// A parsed plan and where each of its steps was written, so messages about a step can name its line.
struct PlanText {
  Plan plan;                                 // algorithm kUser, signal_counts computed
  std::vector<std::vector<int>> step_lines;  // [rank][step]: 1-based line numbers
};

// Parses the text of a plan file. Errors: kInvalidArgument "plan line L[, rank R step #S]: what".
StatusOr<PlanText> parsePlanText(std::string_view text);

// Reads and parses the plan file `path` (a regular file of at most kMaxPlanTextBytes). `hint` follows the
// path in messages ("(PEERREDUCE_PLAN_FILE)").
StatusOr<PlanText> loadPlanText(const std::string& path, std::string_view hint = {});

// The text of `plan`, which parsePlanText reads back to the same steps (sources laid out step by step).
// Any plan prints, built-in ones included; a plan beyond the format's limits (more flags, say) prints but
// does not parse.
std::string formatPlanText(const Plan& plan);

// `message` with " [line L]" after every "rank R ... step #S" it names (the verifier's and the simulator's
// wording), for the steps `text` has lines for.
std::string withPlanLines(const std::string& message, const PlanText& text);

}  // namespace peerreduce
