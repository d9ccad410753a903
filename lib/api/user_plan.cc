#include "api/user_plan.h"

#include <algorithm>

#include "select/plan_cost.h"
#include "select/selector.h"
#include "util/hash.h"

namespace peerreduce {
namespace {

constexpr const char* kSetting = "(PEERREDUCE_PLAN_FILE)";

std::string problemsOf(const VerifyReport& report) {
  std::string out;
  for (const std::string& p : report.problems) out += "\n  " + p;
  return out;
}

}  // namespace

VerifyReport checkPlan(const PlanText& text, const Topology& topology) {
  VerifyOptions options;
  options.link = topology.accessMatrix();
  const VerifyReport twice = verifyPlan(text.plan, options);
  // The second run repeats every problem of the first as "op 1": a person needs each once. Problems only
  // the second run has (hazards between consecutive operations) stay.
  VerifyReport report;
  std::vector<std::string> seen;
  for (const std::string& problem : twice.problems) {
    std::string as_first = problem;
    for (const std::string& op : {std::string("op 1 rank "), std::string(" op 1 step #")}) {
      for (auto at = as_first.find(op); at != std::string::npos; at = as_first.find(op, at + 1)) {
        as_first.replace(at + op.find('1'), 1, "0");
      }
    }
    if (std::find(seen.begin(), seen.end(), as_first) != seen.end()) continue;
    seen.push_back(as_first);
    report.problems.push_back(withPlanLines(problem, text));
  }
  return report;
}

bool UserPlan::runs(std::uint64_t block_bytes, bool in_place) const {
  if (!candidate.plans[in_place ? 1 : 0]) return false;
  const std::uint64_t bytes = tuningTableBytes(collective(), text.plan.world_size, block_bytes);
  return (bytes >= min_bytes && (max_bytes == 0 || bytes < max_bytes)) || tunedFor(block_bytes);
}

bool UserPlan::tunedFor(std::uint64_t block_bytes) const {
  const std::uint64_t bytes = tuningTableBytes(collective(), text.plan.world_size, block_bytes);
  return std::any_of(tuned.begin(), tuned.end(), [&](const auto& r) { return bytes >= r.first && bytes < r.second; });
}

StatusOr<AlgorithmEstimate> UserPlan::estimate(std::size_t count, std::size_t elem) const {
  PlanCostEvaluator evaluator(topology);
  return estimateOperation(text.plan, count, elem, evaluator, scratch_bytes);
}

StatusOr<std::optional<UserPlan>> loadUserPlan(const Config& config, int world_size, const Topology& topology,
                                               const TuningTable* tuning, std::string_view architecture) {
  if (config.plan_file.empty()) return std::optional<UserPlan>();
  UserPlan user;
  user.path = config.plan_file;
  const std::string named = "plan file '" + user.path + "' " + kSetting;
  PR_ASSIGN_OR_RETURN(user.text, loadPlanText(user.path, kSetting));
  Fnv1a hash;
  hash.addString(formatPlanText(user.text.plan));  // the plan itself: comments and spacing may differ
  user.text_hash = hash.value();
  // Reports name the plan by its description; a file without a name is named by its path.
  if (user.text.plan.description.empty()) user.text.plan.description = "plan file " + user.path;
  const Plan& plan = user.text.plan;
  if (plan.world_size != world_size) {
    return invalidArgumentError(named + " is written for " + std::to_string(plan.world_size) +
                                " ranks; this communicator has " + std::to_string(world_size));
  }
  // The file's own placement must verify here; the other is offered only where it verifies too.
  const VerifyReport own = checkPlan(user.text, topology);
  if (!own.ok()) {
    return invalidArgumentError(named + " does not verify on this topology (" + topology.describe() +
                                "):" + problemsOf(own));
  }
  PlanText other = user.text;
  other.plan.in_place = !plan.in_place;
  const VerifyReport flipped = checkPlan(other, topology);
  user.candidate.algorithm = Algorithm::kUser;
  user.candidate.plans[plan.in_place ? 1 : 0] = std::make_shared<const Plan>(plan);
  if (flipped.ok()) {
    user.candidate.plans[plan.in_place ? 0 : 1] = std::make_shared<const Plan>(other.plan);
  } else {
    user.other_placement = std::string(plan.in_place ? "out of place" : "in place") +
                           " the steps do not verify: " + flipped.problems.front();
  }
  user.min_bytes = config.plan_min_bytes;
  user.max_bytes = config.plan_max_bytes;
  if (tuning != nullptr) {
    for (const TuningEntry& e : tuning->entries()) {  // at most kMaxTuningEntries
      if (e.algorithm == Algorithm::kUser && e.collective == plan.collective && e.world_size == world_size &&
          e.arch == architecture) {
        user.tuned.emplace_back(e.min_bytes, e.max_bytes);
      }
    }
  }
  user.topology = topology;
  user.scratch_bytes = config.scratch_bytes;
  // A plan that cannot run even one element in the scratch would fail every call it is chosen for.
  const auto fits = user.estimate(1, 1);
  if (!fits.isOk()) return fits.status().withContext(named);
  return std::optional<UserPlan>(std::move(user));
}

}  // namespace peerreduce
