// The plans one collective may run on a communicator and how one is picked per call: the candidates
// (each built, verified and prepared on the transport at creation), why other algorithms cannot run
// here, and the selector over the candidates. Every collective has its own (broadcast one per root).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/candidates.h"
#include "peerreduce/selection.h"
#include "select/selector.h"

namespace peerreduce {

struct PlanChoice {
  std::vector<Candidate> candidates;  // the selector indexes it
  std::vector<std::string> excluded;  // algorithms that cannot run here, with the reason
  std::shared_ptr<const AlgorithmSelector> selector;
  // The collectives other than allreduce build their choice at first use: whether that happened (a
  // choice built with no candidates means the collective cannot run on this topology: see excluded).
  bool built = false;

  // The candidate the selector picks for a message of `bytes`.
  const Candidate& choose(std::size_t bytes) const {
    return candidates[static_cast<std::size_t>(selector->chooseCandidate(bytes))];
  }
  // The candidate of `algorithm`, or null when it is not one here.
  const Candidate* candidateOf(Algorithm algorithm) const {
    for (const Candidate& c : candidates) {
      if (c.algorithm == algorithm) return &c;
    }
    return nullptr;
  }
  // What the choice picks for `count` elements of `elem` bytes, with every candidate's estimate.
  SelectionReport report(std::size_t count, std::size_t elem, bool forced) const {
    SelectionReport out;
    out.forced = forced;
    const Candidate& chosen = choose(count * elem);
    out.chosen = chosen.algorithm;
    out.plan = chosen.plans[0]->description;
    out.tuned = selector->tuned(count * elem);
    out.excluded = excluded;
    out.candidates = selector->estimate(count, elem);
    return out;
  }
};

}  // namespace peerreduce
