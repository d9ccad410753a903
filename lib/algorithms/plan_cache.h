// PlanCache: plans built and verified once per process.
//
// Plans depend only on (algorithm, world size, in place) and verification additionally on the link
// matrix, so every communicator of a process (the ranks of an in-process world, or communicators
// recreated after a shrink) shares one immutable copy and one verdict. Bounded: at most kPlanCacheLimit
// entries, then it starts over.
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

// Builds (or finds) the plan; runs the verifier on it when `verify` is set and it has not run yet.
StatusOr<VerifiedPlan> cachedPlan(const PlanRequest& request, const std::vector<std::vector<bool>>& link, bool verify);

}  // namespace peerreduce
