#include "algorithms/plan_cache.h"

#include <map>
#include <mutex>
#include <utility>

#include "util/hash.h"

namespace peerreduce {
namespace {

// A plan, and its verdict on a full mesh (every pair linked) once the verifier has run on it.
struct PlanEntry {
  PlanRequest request;
  std::shared_ptr<const Plan> plan;
  bool mesh_verified = false;
  VerifyReport mesh_report;
};

// The verdict for one link matrix, kept only where the mesh verdict does not carry over: the plan uses a
// pair the matrix lacks (its report names the missing link) or the plan failed on the mesh already.
struct LinkEntry {
  PlanRequest request;
  std::vector<std::vector<bool>> link;
  VerifyReport report;
};

// Whether `link` (n x n; empty = every pair) has every pair the verified plan uses.
bool holdsEveryUsedLink(const VerifyReport& report, const std::vector<std::vector<bool>>& link) {
  if (link.empty()) return true;
  if (link.size() != report.links_used.size()) return false;
  for (std::size_t a = 0; a < link.size(); ++a) {
    if (link[a].size() != report.links_used[a].size()) return false;
    for (std::size_t b = 0; b < link[a].size(); ++b) {
      if (report.links_used[a][b] && !link[a][b]) return false;
    }
  }
  return true;
}

std::uint64_t linkHash(const std::vector<std::vector<bool>>& link) {
  Fnv1a hash;
  hash.add(link.size());
  for (const auto& row : link) {
    for (bool b : row) hash.add(b);
  }
  return hash.value();
}

// Keyed by hashes; the request (and the link matrix) are kept and compared to rule out collisions.
struct Tables {
  std::mutex mutex;
  std::map<std::uint64_t, PlanEntry> plans;
  std::map<std::pair<std::uint64_t, std::uint64_t>, LinkEntry> verdicts;
  std::size_t verifier_runs = 0;
};

Tables& tables() {
  static Tables t;
  return t;
}

}  // namespace

PlanCacheStats planCacheStats() {
  Tables& t = tables();
  std::lock_guard<std::mutex> lock(t.mutex);
  return PlanCacheStats{t.plans.size(), t.verdicts.size(), t.verifier_runs};
}

StatusOr<VerifiedPlan> cachedPlan(const PlanRequest& request, const std::vector<std::vector<bool>>& link, bool verify) {
  Tables& t = tables();
  auto& plans = t.plans;
  auto& verdicts = t.verdicts;
  const std::uint64_t key = request.fingerprint();
  // Held while building: concurrent ranks of one process wait for the first to finish, then share it.
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = plans.find(key);
  if (it != plans.end() && !(it->second.request == request)) {
    plans.erase(it);  // a hash collision: rebuild for this request
    it = plans.end();
  }
  if (it == plans.end()) {
    PR_ASSIGN_OR_RETURN(Plan plan, buildPlan(request));
    if (plans.size() >= kPlanCacheLimit) plans.clear();
    it = plans.emplace(key, PlanEntry{request, std::make_shared<const Plan>(std::move(plan)), false, {}}).first;
  }
  PlanEntry& entry = it->second;
  // The links' hash only where a verdict of their own is looked for (most calls never need it).
  auto findVerdict = [&](const std::pair<std::uint64_t, std::uint64_t>& link_key) {
    auto found = verdicts.find(link_key);
    if (found != verdicts.end() && (found->second.link != link || !(found->second.request == request))) {
      verdicts.erase(found);  // a hash collision
      found = verdicts.end();
    }
    return found;
  };
  if (!verify) {
    // An earlier verdict that holds for these links comes along; none is computed.
    if (entry.mesh_verified && entry.mesh_report.ok() && holdsEveryUsedLink(entry.mesh_report, link)) {
      return VerifiedPlan{entry.plan, true, entry.mesh_report};
    }
    if (auto found = findVerdict({key, linkHash(link)}); found != verdicts.end()) {
      return VerifiedPlan{entry.plan, true, found->second.report};
    }
    return VerifiedPlan{entry.plan, false, {}};
  }
  if (!entry.mesh_verified) {
    entry.mesh_report = verifyPlan(*entry.plan);
    entry.mesh_verified = true;
    ++t.verifier_runs;
  }
  // The links are checked only where a plan uses them, so a plan verified on the mesh is verified on every
  // matrix that holds the pairs it uses: one run of the verifier per plan, not per plan and topology.
  if (entry.mesh_report.ok() && holdsEveryUsedLink(entry.mesh_report, link)) {
    return VerifiedPlan{entry.plan, true, entry.mesh_report};
  }
  const std::pair<std::uint64_t, std::uint64_t> link_key{key, linkHash(link)};
  auto found = findVerdict(link_key);
  if (found == verdicts.end()) {
    VerifyOptions options;
    options.link = link;
    VerifyReport report = verifyPlan(*entry.plan, options);
    ++t.verifier_runs;
    if (verdicts.size() >= kPlanCacheLimit) verdicts.clear();
    found = verdicts.emplace(link_key, LinkEntry{request, link, std::move(report)}).first;
  }
  return VerifiedPlan{entry.plan, true, found->second.report};
}

}  // namespace peerreduce
