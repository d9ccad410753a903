// A plan file on a communicator (PEERREDUCE_PLAN_FILE, docs/PLANS.md): read once at creation, verified
// against the agreed links (always, whatever PEERREDUCE_VERIFY_PLANS says: nobody else checked it), and
// offered to the collective it was written for, where it runs for the sizes the settings give and where
// the tuning table names "user". Never chosen by the cost model: the user asked for it by size.
//
// The same door serves `peerreduce-sim plan check` (checkPlan), so the simulator's verdict on a file is the
// verdict a communicator reaches.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/candidates.h"
#include "peerreduce/config.h"
#include "peerreduce/selection.h"
#include "peerreduce/topology.h"
#include "plan/plan_text.h"
#include "select/tuning_table.h"
#include "verify/verifier.h"

namespace peerreduce {

// The verifier's verdict on `text`'s plan alone and twice in a row over `topology`'s links, each problem
// with the line of every step it names ("rank 1 op 0 step #3 [line 20]").
VerifyReport checkPlan(const PlanText& text, const Topology& topology);

struct UserPlan {
  PlanText text;
  std::string path;
  std::uint64_t text_hash = 0;  // of the file's contents: every rank must hold the same plan
  // plans[placement]: the file's steps out of place and in place. The file's own placement must verify;
  // the other is null where it does not (those calls keep the built-in choice; `other_placement` says why).
  Candidate candidate;
  std::string other_placement;
  // [min_bytes, max_bytes) from the settings, max 0 = no bound; and the tuning table's ranges that name
  // "user" for this collective, architecture and world size. Bytes as the tuning table counts them.
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> tuned;
  // What prices the plan for reports (the communicator's agreed links and scratch).
  Topology topology;
  std::size_t scratch_bytes = 0;

  Collective collective() const { return text.plan.collective; }
  // Whether the plan runs an operation of `block_bytes` (count x element size) in this placement, and
  // whether it does because of the tuning table.
  bool runs(std::uint64_t block_bytes, bool in_place) const;
  bool tunedFor(std::uint64_t block_bytes) const;
  // The plan's predicted time for `count` elements of `elem` bytes (segments included); kOutOfMemory when
  // not one segment fits the scratch.
  StatusOr<AlgorithmEstimate> estimate(std::size_t count, std::size_t elem) const;
};

// The plan file `config` names, checked for a world of `world_size` over `topology` (the agreed links);
// nullopt when no file is set. kInvalidArgument naming the file and PEERREDUCE_PLAN_FILE: unreadable,
// malformed (line, rank, step), another world size, a plan that does not verify here (the verifier's
// problems with their lines) or does not fit the scratch.
StatusOr<std::optional<UserPlan>> loadUserPlan(const Config& config, int world_size, const Topology& topology,
                                               const TuningTable* tuning, std::string_view architecture);

}  // namespace peerreduce
