// prConfig_t (peerreduce/peerreduce.h): the C form of Config. Every Config-bound row of the settings
// registry (config/settings_registry.h) has one field here, listed in kFields; prConfigInit, prConfigSet,
// prConfigGet and the conversion at communicator creation all go through that list, so a C caller reaches
// every setting C++ has and an initialised prConfig_t means what a NULL one means.
#include <array>
#include <chrono>
#include <cstring>
#include <span>
#include <string>

#include "api/c_api_internal.h"
#include "config/settings_registry.h"

namespace peerreduce::capi {
namespace {

// The C text fields hold every value the registry accepts, and nothing more is needed.
static_assert(PR_CONFIG_LINK_MASK_BYTES == kMaxLinkMaskChars + 1);
static_assert(PR_CONFIG_PATH_BYTES == kMaxTuningFileChars + 1);

// A text field of prConfig_t, NUL-terminated within its array.
StatusOr<std::string> readText(std::span<const char> field, const char* field_name) {
  const void* end = std::memchr(field.data(), '\0', field.size());
  if (end == nullptr) {
    return invalidArgumentError(std::string("prConfig_t.") + field_name + " is not NUL-terminated within its " +
                                std::to_string(field.size()) + " bytes; set it with prConfigSet");
  }
  return std::string(field.data(), static_cast<const char*>(end));
}

Status writeText(const std::string& text, std::span<char> field, const char* field_name, SettingId id) {
  if (text.size() >= field.size()) {
    return invalidArgumentError(settingRow(id).spec->name + " of " + std::to_string(text.size()) +
                                " characters does not fit prConfig_t." + field_name + " (at most " +
                                std::to_string(field.size() - 1) + ")");
  }
  std::memcpy(field.data(), text.c_str(), text.size() + 1);
  return Status::ok();
}

// One field of prConfig_t: the registry row it holds, and the copies in both directions. Copies do not
// validate: validation is the registry's, on the Config.
struct CField {
  SettingId id;
  Status (*fromC)(const prConfig_t&, Config&);
  Status (*toC)(const Config&, prConfig_t&);
};

constexpr std::array<CField, 20> kFields = {{
    {SettingId::kAlgorithm,
     [](const prConfig_t& c, Config& out) {
       out.algorithm = static_cast<Algorithm>(c.algorithm);
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.algorithm = static_cast<int>(in.algorithm);
       return Status::ok();
     }},
    {SettingId::kReduceScatterAlgorithm,
     [](const prConfig_t& c, Config& out) {
       out.reduce_scatter_algorithm = static_cast<Algorithm>(c.reduce_scatter_algorithm);
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.reduce_scatter_algorithm = static_cast<int>(in.reduce_scatter_algorithm);
       return Status::ok();
     }},
    {SettingId::kAllGatherAlgorithm,
     [](const prConfig_t& c, Config& out) {
       out.all_gather_algorithm = static_cast<Algorithm>(c.all_gather_algorithm);
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.all_gather_algorithm = static_cast<int>(in.all_gather_algorithm);
       return Status::ok();
     }},
    {SettingId::kBroadcastAlgorithm,
     [](const prConfig_t& c, Config& out) {
       out.broadcast_algorithm = static_cast<Algorithm>(c.broadcast_algorithm);
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.broadcast_algorithm = static_cast<int>(in.broadcast_algorithm);
       return Status::ok();
     }},
    {SettingId::kDevice,
     [](const prConfig_t& c, Config& out) {
       out.device = c.device;
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.device = in.device;
       return Status::ok();
     }},
    {SettingId::kTimeoutMs,
     [](const prConfig_t& c, Config& out) {
       out.timeout = std::chrono::milliseconds(c.timeout_ms);
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.timeout_ms = static_cast<std::int64_t>(in.timeout.count());
       return Status::ok();
     }},
    {SettingId::kBootstrapTimeoutMs,
     [](const prConfig_t& c, Config& out) {
       out.bootstrap_timeout = std::chrono::milliseconds(c.bootstrap_timeout_ms);
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.bootstrap_timeout_ms = static_cast<std::int64_t>(in.bootstrap_timeout.count());
       return Status::ok();
     }},
    {SettingId::kScratchBytes,
     [](const prConfig_t& c, Config& out) {
       out.scratch_bytes = c.scratch_bytes;
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.scratch_bytes = in.scratch_bytes;
       return Status::ok();
     }},
    {SettingId::kVerifyPlans,
     [](const prConfig_t& c, Config& out) {
       out.verify_plans = c.verify_plans != 0;
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.verify_plans = in.verify_plans ? 1 : 0;
       return Status::ok();
     }},
    {SettingId::kLinkMask,
     [](const prConfig_t& c, Config& out) -> Status {
       PR_ASSIGN_OR_RETURN(out.link_mask, readText(c.link_mask, "link_mask"));
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       return writeText(in.link_mask, c.link_mask, "link_mask", SettingId::kLinkMask);
     }},
    {SettingId::kTuningFile,
     [](const prConfig_t& c, Config& out) -> Status {
       PR_ASSIGN_OR_RETURN(out.tuning_file, readText(c.tuning_file, "tuning_file"));
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       return writeText(in.tuning_file, c.tuning_file, "tuning_file", SettingId::kTuningFile);
     }},
    {SettingId::kPlanFile,
     [](const prConfig_t& c, Config& out) -> Status {
       PR_ASSIGN_OR_RETURN(out.plan_file, readText(c.plan_file, "plan_file"));
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       return writeText(in.plan_file, c.plan_file, "plan_file", SettingId::kPlanFile);
     }},
    {SettingId::kPlanMinBytes,
     [](const prConfig_t& c, Config& out) {
       out.plan_min_bytes = c.plan_min_bytes;
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.plan_min_bytes = in.plan_min_bytes;
       return Status::ok();
     }},
    {SettingId::kPlanMaxBytes,
     [](const prConfig_t& c, Config& out) {
       out.plan_max_bytes = c.plan_max_bytes;
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.plan_max_bytes = in.plan_max_bytes;
       return Status::ok();
     }},
    {SettingId::kCheckOperations,
     [](const prConfig_t& c, Config& out) {
       out.check_operations = c.check_operations != 0;
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.check_operations = in.check_operations ? 1 : 0;
       return Status::ok();
     }},
    {SettingId::kPoolBytes,
     [](const prConfig_t& c, Config& out) {
       out.memory.pool_bytes = c.pool_bytes;
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.pool_bytes = in.memory.pool_bytes;
       return Status::ok();
     }},
    {SettingId::kPoolQuotaBytes,
     [](const prConfig_t& c, Config& out) {
       out.memory.pool_quota_bytes = c.pool_quota_bytes;
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.pool_quota_bytes = in.memory.pool_quota_bytes;
       return Status::ok();
     }},
    {SettingId::kPoolAlignment,
     [](const prConfig_t& c, Config& out) {
       out.memory.pool_alignment_bytes = c.pool_alignment_bytes;
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.pool_alignment_bytes = in.memory.pool_alignment_bytes;
       return Status::ok();
     }},
    {SettingId::kPoolDefragThreshold,
     [](const prConfig_t& c, Config& out) {
       out.memory.defrag_threshold = c.pool_defrag_threshold;
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.pool_defrag_threshold = in.memory.defrag_threshold;
       return Status::ok();
     }},
    {SettingId::kPinnedLimitBytes,
     [](const prConfig_t& c, Config& out) {
       out.memory.pinned_limit_bytes = c.pinned_limit_bytes;
       return Status::ok();
     },
     [](const Config& in, prConfig_t& c) {
       c.pinned_limit_bytes = in.memory.pinned_limit_bytes;
       return Status::ok();
     }},
}};

// prInvalidArgument unless `config` was filled by prConfigInit of a caller built with this header.
Status checkStructSize(const prConfig_t& config) {
  if (config.struct_size == sizeof(prConfig_t)) return Status::ok();
  if (config.struct_size == 0) {
    return invalidArgumentError("prConfig_t.struct_size is 0: fill the struct with prConfigInit() first");
  }
  return invalidArgumentError("prConfig_t.struct_size is " + std::to_string(config.struct_size) +
                              " but this library's prConfig_t has " + std::to_string(sizeof(prConfig_t)) +
                              " bytes; build against the peerreduce.h of the library you link");
}

StatusOr<const CField*> fieldNamed(const char* name) {
  const SettingRow* row = findSettingRow(name);
  if (row != nullptr) {
    for (const CField& field : kFields) {
      if (field.id == row->id) return &field;
    }
  }
  // Not a field: the registry's error says whether the name is unknown or read elsewhere.
  return getConfigSetting(Config{}, name).status();
}

// The field `name` of `config` set from `text` through the registry; nothing else changes.
Status setField(prConfig_t& config, const char* name, const char* text) {
  PR_RETURN_IF_ERROR(checkStructSize(config));
  PR_ASSIGN_OR_RETURN(const CField* field, fieldNamed(name));
  Config parsed;
  PR_RETURN_IF_ERROR(setConfigSetting(parsed, name, text));
  return field->toC(parsed, config);  // writes nothing when the value does not fit
}

StatusOr<std::string> getField(const prConfig_t& config, const char* name) {
  PR_RETURN_IF_ERROR(checkStructSize(config));
  PR_ASSIGN_OR_RETURN(const CField* field, fieldNamed(name));
  Config holder;
  PR_RETURN_IF_ERROR(field->fromC(config, holder));
  return getConfigSetting(holder, name);
}

}  // namespace

std::span<const SettingId> configFieldSettings() {
  static const std::array<SettingId, kFields.size()> ids = [] {
    std::array<SettingId, kFields.size()> out{};
    for (std::size_t i = 0; i < kFields.size(); ++i) out[i] = kFields[i].id;
    return out;
  }();
  return ids;
}

StatusOr<Config> toConfig(const prConfig_t* config) {
  if (config == nullptr) return Config::fromEnvironment();
  PR_RETURN_IF_ERROR(checkStructSize(*config).withContext("prConfig_t"));
  Config out;
  for (const CField& field : kFields) PR_RETURN_IF_ERROR(field.fromC(*config, out));
  // Report a bad value here, naming the prConfig_t, rather than later from inside a rank.
  PR_RETURN_IF_ERROR(out.validate().withContext("prConfig_t"));
  return out;
}

StatusOr<prConfig_t> fromConfig(const Config& config) {
  prConfig_t out{};
  out.struct_size = sizeof(prConfig_t);
  for (const CField& field : kFields) PR_RETURN_IF_ERROR(field.toC(config, out));
  return out;
}

}  // namespace peerreduce::capi

using peerreduce::capi::guarded;
using peerreduce::capi::nullArgument;
using peerreduce::capi::toResult;

extern "C" {

size_t prConfigSize(void) noexcept { return sizeof(prConfig_t); }

prResult_t prConfigInitSized(prConfig_t* config, size_t struct_size) noexcept {
  constexpr const char* kFunction = "prConfigInit";
  return guarded(kFunction, [&]() -> prResult_t {
    if (config == nullptr) return nullArgument(kFunction, "config", "pass the address of a prConfig_t to fill");
    if (struct_size != sizeof(prConfig_t)) {
      return toResult(kFunction, peerreduce::invalidArgumentError(
                                     "struct_size " + std::to_string(struct_size) + " is not this library's " +
                                     std::to_string(sizeof(prConfig_t)) +
                                     " bytes of prConfig_t; build against the peerreduce.h of the library you link"));
    }
    auto effective = peerreduce::Config::fromEnvironment();
    if (!effective.isOk()) return toResult(kFunction, effective.status());
    auto filled = peerreduce::capi::fromConfig(*effective);
    if (!filled.isOk()) return toResult(kFunction, filled.status());
    *config = *filled;
    return prSuccess;
  });
}

prResult_t prConfigSet(prConfig_t* config, const char* name, const char* value) noexcept {
  constexpr const char* kFunction = "prConfigSet";
  return guarded(kFunction, [&]() -> prResult_t {
    if (config == nullptr) return nullArgument(kFunction, "config", "pass a prConfig_t filled by prConfigInit");
    if (name == nullptr) return nullArgument(kFunction, "name", "pass a setting's name, e.g. PEERREDUCE_POOL_BYTES");
    if (value == nullptr) return nullArgument(kFunction, "value", "pass the value as text, e.g. 128M");
    return toResult(kFunction, peerreduce::capi::setField(*config, name, value));
  });
}

prResult_t prConfigGet(const prConfig_t* config, const char* name, char* value, size_t value_size) noexcept {
  constexpr const char* kFunction = "prConfigGet";
  return guarded(kFunction, [&]() -> prResult_t {
    if (config == nullptr) return nullArgument(kFunction, "config", "pass a prConfig_t filled by prConfigInit");
    if (name == nullptr) return nullArgument(kFunction, "name", "pass a setting's name, e.g. PEERREDUCE_POOL_BYTES");
    if (value == nullptr) return nullArgument(kFunction, "value", "pass a buffer of value_size bytes");
    auto text = peerreduce::capi::getField(*config, name);
    if (!text.isOk()) return toResult(kFunction, text.status());
    if (text->size() >= value_size) {
      return toResult(kFunction, peerreduce::invalidArgumentError(
                                     "value_size " + std::to_string(value_size) + " is too small: the value of " +
                                     name + " needs " + std::to_string(text->size() + 1) + " bytes (NUL included)"));
    }
    std::memcpy(value, text->c_str(), text->size() + 1);
    return prSuccess;
  });
}

}  // extern "C"
