#include "algorithms/plan_cache.h"

#include <map>
#include <mutex>
#include <tuple>

#include "util/hash.h"

namespace peerreduce {

StatusOr<VerifiedPlan> cachedPlan(const PlanRequest& request, const std::vector<std::vector<bool>>& link, bool verify) {
  // Keyed by hashes of the request and the link matrix; both are kept and compared to rule out collisions.
  using Key = std::pair<std::uint64_t, std::uint64_t>;
  struct Entry {
    PlanRequest request;
    std::vector<std::vector<bool>> link;
    VerifiedPlan plan;
  };
  static std::mutex mutex;
  static std::map<Key, Entry> cache;
  Fnv1a hash;
  for (const auto& row : link) {
    for (bool b : row) hash.add(b);
  }
  const Key key{request.fingerprint(), hash.value()};
  // Held while building: concurrent ranks of one process wait for the first to finish, then share it.
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end() && (it->second.link != link || !(it->second.request == request))) {
    cache.erase(it);  // a hash collision: rebuild for this matrix
    it = cache.end();
  }
  if (it == cache.end()) {
    PR_ASSIGN_OR_RETURN(Plan plan, buildPlan(request));
    if (cache.size() >= kPlanCacheLimit) cache.clear();
    it =
        cache.emplace(key, Entry{request, link, VerifiedPlan{std::make_shared<const Plan>(std::move(plan)), false, {}}})
            .first;
  }
  VerifiedPlan& entry = it->second.plan;
  if (verify && !entry.verified) {
    VerifyOptions options;
    options.link = link;
    entry.report = verifyPlan(*entry.plan, options);
    entry.verified = true;
  }
  return entry;
}

}  // namespace peerreduce
