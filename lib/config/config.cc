// Config's environment, validation and fingerprint: each is the settings registry's
// (config/settings_registry.h) applied to the rows Config holds.
#include "peerreduce/config.h"

#include <algorithm>

#include "config/settings_registry.h"

namespace peerreduce {

StatusOr<Config> Config::fromEnvironment(const Config& base, const std::function<const char*(const char*)>& getenv) {
  Config config = base;
  PR_RETURN_IF_ERROR(applyEnvironment(config, SettingOwner::kConfig, getenv));
  auto memory = MemorySettings::fromEnvironment(config.memory, getenv);
  if (!memory.isOk()) return memory.status();
  config.memory = *memory;
  PR_RETURN_IF_ERROR(config.validate());
  return config;
}

StatusOr<Config> Config::fromEnvironment() { return fromEnvironment(Config{}); }

Status Config::validate() const {
  for (Collective c :
       {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    // A plan file runs for the sizes its settings give; forcing "user" everywhere would hide that.
    if (algorithmSettingOf(c) == Algorithm::kUser) {
      return invalidArgumentError(std::string(collectiveName(c)) +
                                  " algorithm 'user' cannot be forced; name the plan file with PEERREDUCE_PLAN_FILE "
                                  "and its sizes with PEERREDUCE_PLAN_MIN_BYTES / PEERREDUCE_PLAN_MAX_BYTES "
                                  "(docs/PLANS.md)");
    }
  }
  // The mask's syntax is checked here; its ranks against the world size at communicator creation.
  PR_RETURN_IF_ERROR(checkOwnedSettings(*this, SettingOwner::kConfig));
  if (plan_max_bytes != 0 && plan_max_bytes <= plan_min_bytes) {
    return invalidArgumentError("PEERREDUCE_PLAN_MAX_BYTES " + std::to_string(plan_max_bytes) +
                                " must be above PEERREDUCE_PLAN_MIN_BYTES " + std::to_string(plan_min_bytes) +
                                " (or 0: no upper bound)");
  }
  return memory.validate();
}

std::chrono::milliseconds Config::bootstrapTimeout() const { return std::max(timeout, bootstrap_timeout); }

std::uint64_t Config::fingerprint() const { return settingsFingerprint(*this); }

std::string Config::describe() const {
  return "algorithm=" + std::string(algorithmName(algorithm)) + " timeout_ms=" + std::to_string(timeout.count()) +
         (bootstrap_timeout.count() == kDefaultBootstrapTimeoutMs
              ? ""
              : " bootstrap_timeout_ms=" + std::to_string(bootstrap_timeout.count())) +
         " scratch_bytes=" + std::to_string(scratch_bytes) + " verify_plans=" + (verify_plans ? "1" : "0") +
         (check_operations ? "" : " check_operations=0") + (link_mask.empty() ? "" : " link_mask=" + link_mask) +
         // Each collective's own algorithm only where set, like the optional settings around it.
         (reduce_scatter_algorithm == Algorithm::kAuto
              ? ""
              : " reduce_scatter_algorithm=" + std::string(algorithmName(reduce_scatter_algorithm))) +
         (all_gather_algorithm == Algorithm::kAuto
              ? ""
              : " all_gather_algorithm=" + std::string(algorithmName(all_gather_algorithm))) +
         (broadcast_algorithm == Algorithm::kAuto
              ? ""
              : " broadcast_algorithm=" + std::string(algorithmName(broadcast_algorithm))) +
         (tuning_file.empty() ? "" : " tuning_file=" + tuning_file) +
         (device == kDeviceCurrent ? "" : " device=" + std::to_string(device)) +
         (plan_file.empty() ? "" : " plan_file=" + plan_file) +
         (plan_min_bytes == 0 ? "" : " plan_min_bytes=" + std::to_string(plan_min_bytes)) +
         (plan_max_bytes == 0 ? "" : " plan_max_bytes=" + std::to_string(plan_max_bytes)) +
         // Like the optional settings above, the memory settings are listed only when not the defaults.
         (memory == MemorySettings{} ? "" : " " + memory.describe());
}

}  // namespace peerreduce
