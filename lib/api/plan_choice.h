// The plans one collective may run on a communicator and how one is picked per call: the candidates
// (each built, verified and prepared on the transport at creation), why other algorithms cannot run
// here, and the selector over the candidates. Allreduce has one; each collective to come gets its own.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/candidates.h"
#include "select/selector.h"

namespace peerreduce {

struct PlanChoice {
  std::vector<Candidate> candidates;  // the selector indexes it
  std::vector<std::string> excluded;  // algorithms that cannot run here, with the reason
  std::shared_ptr<const AlgorithmSelector> selector;

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
};

}  // namespace peerreduce
