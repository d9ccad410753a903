// What the algorithm selector decides and why: Communicator::explainSelection's answer.
//
// Plain data, no behaviour. The selector (lib/select/) fills it from its cost model, the tuning table
// and the configuration; the C API and peerreduce-sim print it.
#pragma once

#include <string>
#include <vector>

#include "peerreduce/types.h"

namespace peerreduce {

// What the selector predicted for one candidate algorithm at one size.
struct AlgorithmEstimate {
  Algorithm algorithm = Algorithm::kOneShot;
  std::string plan;   // the variant: "ring over 0-2-1-3", "tree rooted at 0, height 2, 8 pipelined chunks"
  int candidate = 0;  // index among the communicator's candidate plans
  double predicted_us = 0.0;
  int segments = 1;  // pieces the operation is split into to fit the scratch
};

// What allreduce() would do (or did) for a given size, and why.
struct SelectionReport {
  Algorithm chosen = Algorithm::kOneShot;
  std::string plan;                   // the chosen variant's description (its route on a partial topology)
  bool forced = false;                // by Config::algorithm / PEERREDUCE_ALGO rather than by the cost model
  bool tuned = false;                 // by the tuning table (PEERREDUCE_TUNING_FILE) rather than by the cost model
  bool plan_file = false;             // the plan file's size range (PEERREDUCE_PLAN_FILE, docs/PLANS.md) chose it
  std::vector<std::string> excluded;  // algorithms that cannot run here, each with the reason
  std::vector<AlgorithmEstimate> candidates;  // every algorithm considered, cheapest first
  // GPU blocks the chosen plan's kernel launches for the operation's first segment, out of place: the
  // multiprocessors it keeps busy (the transport's KernelLaunches); 0 where the transport runs no
  // kernels (the simulator, MPI).
  int kernel_blocks = 0;
};

}  // namespace peerreduce
