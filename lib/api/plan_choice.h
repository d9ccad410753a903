// The plans one collective may run on a communicator and how one is picked per call: the candidates
// (each built, verified and prepared on the transport at creation), why other algorithms cannot run
// here, and the selector over the candidates. Every collective has its own (broadcast one per root).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/candidates.h"
#include "api/user_plan.h"
#include "peerreduce/selection.h"
#include "select/selector.h"

namespace peerreduce {

struct PlanChoice {
  std::vector<Candidate> candidates;  // the selector indexes it
  std::vector<std::string> excluded;  // algorithms that cannot run here, with the reason
  std::shared_ptr<const AlgorithmSelector> selector;
  // The plan file written for this collective (and root), null when none: it runs where its size range or
  // the tuning table says, in the placements where it verified; the selector chooses everywhere else.
  std::shared_ptr<const UserPlan> user;
  // The collectives other than allreduce build their choice at first use: whether that happened (a
  // choice built with no candidates means the collective cannot run on this topology: see excluded).
  bool built = false;

  // The candidate that runs a message of `bytes` (count x element size) in this placement.
  const Candidate& choose(std::size_t bytes, bool in_place = false) const {
    if (user && user->runs(bytes, in_place)) return user->candidate;
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
    const std::size_t bytes = count * elem;
    const bool by_user = user && user->runs(bytes, false);
    out.forced = forced && !by_user;
    const Candidate& chosen = choose(bytes);
    out.chosen = chosen.algorithm;
    out.plan = chosen.plans[0]->description;
    out.tuned = by_user ? user->tunedFor(bytes) : selector->tuned(bytes);
    out.plan_file = by_user && !out.tuned;
    out.excluded = excluded;
    out.candidates = selector->estimate(count, elem);
    if (user) {
      // Listed beside the built-ins wherever it could run, chosen or not, after the selector's indices.
      auto estimate = user->estimate(count, elem);
      if (estimate.isOk()) {
        estimate->candidate = static_cast<int>(candidates.size());
        out.candidates.push_back(*estimate);
        std::stable_sort(
            out.candidates.begin(), out.candidates.end(),
            [](const AlgorithmEstimate& a, const AlgorithmEstimate& b) { return a.predicted_us < b.predicted_us; });
      }
      if (!user->other_placement.empty()) out.excluded.push_back("user: " + user->other_placement);
    }
    return out;
  }
};

}  // namespace peerreduce
