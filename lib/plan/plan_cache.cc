#include "plan/plan_cache.h"

#include <map>
#include <mutex>
#include <tuple>

namespace peerreduce {

StatusOr<VerifiedPlan> cachedPlan(const PlanRequest& request, const std::vector<std::vector<bool>>& link, bool verify) {
  using Key = std::tuple<int, int, bool, std::vector<std::vector<bool>>>;
  static std::mutex mutex;
  static std::map<Key, VerifiedPlan> cache;
  Key key{static_cast<int>(request.algorithm), request.world_size, request.in_place, link};
  // Held while building: concurrent ranks of one process wait for the first to finish, then share it.
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) {
    PR_ASSIGN_OR_RETURN(Plan plan, buildPlan(request));
    if (cache.size() >= kPlanCacheLimit) cache.clear();
    it = cache.emplace(std::move(key), VerifiedPlan{std::make_shared<const Plan>(std::move(plan)), false, {}}).first;
  }
  if (verify && !it->second.verified) {
    VerifyOptions options;
    options.link = link;
    it->second.report = verifyPlan(*it->second.plan, options);
    it->second.verified = true;
  }
  return it->second;
}

}  // namespace peerreduce
