// PlanCache: plans built and verified once per process.
//
// Plans depend only on their request (algorithm, world size, in place, route), so every communicator of a
// process (the ranks of an in-process world, or communicators recreated after a shrink) shares one
// immutable copy. The verifier runs once per plan, on a full mesh: it records the pairs the plan uses
// (VerifyReport::links_used), and that verdict stands for every link matrix holding those pairs. Only a
// matrix that lacks one (the plan is refused there, naming the link) gets a verdict of its own. Bounded:
// at most kPlanCacheLimit plans and as many per-matrix verdicts, then each table starts over.
#pragma once

#include <memory>
#include <vector>

#include "algorithms/algorithms.h"
#include "peerreduce/plan.h"
#include "verify/verifier.h"

namespace peerreduce {

// 5 algorithms x 2 variants x many world sizes and topologies. An application meets a few dozen; the property
// suites and the fault campaign meet thousands, and a smaller limit made them start over every few worlds and
// build and verify the same plans again.
inline constexpr std::size_t kPlanCacheLimit = 2048;

struct VerifiedPlan {
  std::shared_ptr<const Plan> plan;
  bool verified = false;  // the verifier ran on it (with `link`)
  VerifyReport report;    // its findings when it ran
};

// What the cache holds now, and how often it has run the verifier in this process (for tests and diagnostics).
struct PlanCacheStats {
  std::size_t plans = 0;          // distinct requests built
  std::size_t link_verdicts = 0;  // verdicts of their own: link matrices lacking a pair their plan uses
  std::size_t verifier_runs = 0;  // since the process started, evictions included
};
PlanCacheStats planCacheStats();

// Builds (or finds) the plan; runs the verifier on it when `verify` is set and no verdict for these links
// exists yet. Without `verify`, a verdict that exists for these links comes along (verified = true).
StatusOr<VerifiedPlan> cachedPlan(const PlanRequest& request, const std::vector<std::vector<bool>>& link, bool verify);

}  // namespace peerreduce
