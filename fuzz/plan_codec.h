// Plans decoded from fuzz input, for the plan verifier's fuzzer (fuzz/plan_verifier_fuzz.cc).
//
// decodeRawPlan reads every field of a small plan from the bytes, out-of-range values included (ranks,
// chunks, slots and flags of -1 and one past the end, invalid step and buffer kinds), as a serialised
// plan from an untrusted source would carry them. mutateBuiltPlan starts from a plan a real algorithm
// built and changes a few fields, which reaches plans the verifier must judge closely: nearly right.
#pragma once

#include "fuzz_input.h"
#include "peerreduce/plan.h"

namespace peerreduce::fuzz {

Plan decodeRawPlan(FuzzInput& input);
// nullopt-like: returns false when the input names a plan the builders refuse.
bool mutateBuiltPlan(FuzzInput& input, Plan& plan);
// signalCounts(plan) when every signal names a holder and flag in range (the derived copy a producer
// would store), otherwise leaves the stored counts as they are; the verifier must catch either.
void refreshSignalCounts(Plan& plan);

}  // namespace peerreduce::fuzz
