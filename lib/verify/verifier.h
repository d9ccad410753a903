// The plan verifier: proves, for every execution order, that a plan computes the allreduce.
//
// It checks a sequence of operations (one plan, or several run back to back on the same ranks, each
// entered through the entry fence of peerreduce/plan.h) and reports every problem it finds:
// - structure: ranks, slots, chunks and flags in range; well-formed steps; signal counts up to date;
//   peer memory touched only over links the caller says exist;
// - liveness: every wait is eventually satisfied (no deadlock, no wait for a signal never sent);
// - ordering: any two accesses to the same memory, at least one a write, are ordered by
//   happens-before (program order plus signal -> wait edges, computed with vector clocks). This covers
//   "every read of a peer's memory is ordered after that peer's signal" and the reverse hazard of
//   overwriting memory a peer may still read, also across consecutive operations;
// - results: symbolically, every rank's output chunk c is an expression over the inputs of chunk c
//   in which every rank's input appears exactly once, the avg finalisation is applied exactly once at
//   the root, and the expression (its tree, hence its fold order) is identical on every rank. Inputs
//   enter expressions only through reads of a send buffer (kInput), which in a reducing collective must
//   still hold the rank's input (not an in-place result): executors premultiply exactly those reads under
//   a floating avg, so every input is scaled exactly once and integer avg divides exactly once.
//
// Cost: O(steps x world size) time and memory; independent of the element count, because plans move
// whole chunks and chunk boundaries come from ChunkLayout.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "peerreduce/plan.h"
#include "peerreduce/status.h"

namespace peerreduce {

struct VerifyOptions {
  // When non-empty, link[a][b] says whether rank a may touch rank b's memory directly (read, write
  // or signal). Empty means every pair is linked.
  std::vector<std::vector<bool>> link;
  // Stop collecting problems after this many (the first ones are the useful ones).
  int max_problems = 16;
};

struct VerifyReport {
  std::vector<std::string> problems;
  // links_used[a][b]: some step of rank a touches or signals rank b's memory (a != b). Complete when the
  // report is ok; then the same report holds for every link matrix that has these pairs (the links are
  // checked nowhere else), which lets a cache verify a plan once for every topology it can run on.
  std::vector<std::vector<bool>> links_used;
  bool ok() const { return problems.empty(); }
  // kInternal error listing the problems (a plan that fails verification is a bug), or ok.
  Status toStatus(std::string_view what) const;
};

// Verifies `plans` executed one after another on every rank (each must have the same world size).
VerifyReport verifySequence(std::span<const Plan* const> plans, const VerifyOptions& options = {});

// Verifies `plan` alone and twice in a row (the second run catches hazards between operations).
VerifyReport verifyPlan(const Plan& plan, const VerifyOptions& options = {});

}  // namespace peerreduce
