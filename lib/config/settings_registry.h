// The settings registry: every PEERREDUCE_* setting in one table (name, kind, range, default, whether
// ranks must agree, one line of help), and everything that is derived from it:
// - reading the environment (Config::fromEnvironment, MemorySettings::fromEnvironment, the GPU transport's
//   settings through the typed accessors below, the logger through its own row);
// - validation of values from code (Config::validate, MemorySettings::validate);
// - the configuration fingerprint ranks compare at creation (Config::fingerprint): the rows marked
//   SettingAgreement::kFingerprint, in table order;
// - setting and reading a Config field by variable name (the C API's prConfigSet / prConfigGet);
// - documentation (settings_doc.h: `peerreduce-sim settings`, docs/SETTINGS.md).
// The rules every row follows (empty = unset, the grammars, the messages) are util/setting_spec.h's.
//
// Example:
//   const SettingRow& row = settingRow(SettingId::kScratchBytes);
//   auto bytes = readByteSizeSetting(SettingId::kGpuBytesPerBlock, nullptr);  // nullopt when unset
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "peerreduce/config.h"
#include "util/setting_spec.h"

namespace peerreduce {

// Every setting, in table order (the fingerprint's order: never reorder the kFingerprint rows).
enum class SettingId : int {
  kAlgorithm,
  kReduceScatterAlgorithm,
  kAllGatherAlgorithm,
  kBroadcastAlgorithm,
  kTimeoutMs,
  kBootstrapTimeoutMs,
  kScratchBytes,
  kVerifyPlans,
  kLinkMask,
  kTuningFile,
  kPlanFile,
  kPlanMinBytes,
  kPlanMaxBytes,
  kPoolBytes,
  kPoolQuotaBytes,
  kPoolAlignment,
  kPoolDefragThreshold,
  kPinnedLimitBytes,
  kGpuMaxBlocks,
  kGpuInterpreterMaxBlocks,
  kGpuPullMaxBlocks,
  kGpuBytesPerBlock,
  kGpuLineBytesPerBlock,
  kGpuFused,
  kGpuOverlap,
  kGpuLowLatencyMaxBytes,
  kGpuLowLatencyTwoShotMaxBytes,
  kGpuPushMinBytes,
  kGpuPushOneShotMinBytes,
  kGpuPushOneShotPieceBytes,
  kGpuPushCollectiveMinBytes,
  kGpuCollectiveLinesMaxBytes,
  kGpuHostLinesMaxBytes,
  kGpuCopyEngines,
  kGpuPushStream,
  kGpuPushStreamPieceBytes,
  kGpuPushCollectiveMaxRanks,
  kGpuPushHost,
  kGpuFaultProbePairs,
  kDebug,
  kNode,
  kNcclLibrary,
  kNcclTake,
  kNcclMaxBytes,
  kNcclTakeAvg,
  kNcclTakeTable,
  kNcclSummary,
  kNcclSimulate,
  kDevice,
  kCheckOperations,
};
inline constexpr int kSettingCount = static_cast<int>(SettingId::kCheckOperations) + 1;

// Who reads a setting.
enum class SettingOwner {
  kConfig,        // a field of Config
  kMemory,        // a field of Config::memory (MemorySettings)
  kGpuTransport,  // the GPU transport, from its own environment (lib/gpu/kernel_choice.h)
  kLogger,        // the logger (util/log.h)
  kBootstrap,     // the grouping of ranks by machine (bootstrap/host_identity.h)
  kNccl,          // the NCCL-compatible library (nccl/nccl_settings.h)
};
const char* settingOwnerName(SettingOwner owner);

struct SettingRow {
  SettingId id;
  const SettingSpec* spec;
  SettingOwner owner;
  // Config and memory rows: the field, read and written as a SettingValue of the spec's kind. Null for the
  // rows other layers consume.
  SettingValue (*get)(const Config&) = nullptr;
  void (*set)(Config&, const SettingValue&) = nullptr;
  bool boundToConfig() const { return get != nullptr; }
};

std::span<const SettingRow> settingRows();
const SettingRow& settingRow(SettingId id);
// The row of a variable name ("PEERREDUCE_POOL_BYTES"), or null.
const SettingRow* findSettingRow(std::string_view name);

// `config` with the variables of the rows of `owner` applied, in table order; not validated as a whole.
Status applyEnvironment(Config& config, SettingOwner owner, const Getenv& getenv);
// Every row of `owner` checked on `config`, in table order: the first value out of range.
Status checkOwnedSettings(const Config& config, SettingOwner owner);
// The hash of every kFingerprint row's value, in table order.
std::uint64_t settingsFingerprint(const Config& config);

// By variable name, for the rows bound to Config: `text` parsed and range-checked as the environment's
// would be (an empty text is an error except for the path and the mask, where it means none), then stored;
// on error `config` is unchanged. Cross-setting rules (a quota within the pool) are left to validate().
Status setConfigSetting(Config& config, std::string_view name, std::string_view text);
// The canonical text of a Config-bound setting (formatSettingValue).
StatusOr<std::string> getConfigSetting(const Config& config, std::string_view name);

// Typed accessors for the rows other layers consume: the value from `getenv` (null: the process
// environment), nullopt when unset or empty, kInvalidArgument when malformed.
StatusOr<std::optional<std::int64_t>> readIntegerSetting(SettingId id, const Getenv& getenv);
StatusOr<std::optional<std::uint64_t>> readByteSizeSetting(SettingId id, const Getenv& getenv);
StatusOr<std::optional<bool>> readBooleanSetting(SettingId id, const Getenv& getenv);
// A choice's number (kChoice rows), and a path's text (kPath rows).
StatusOr<std::optional<std::int64_t>> readChoiceSetting(SettingId id, const Getenv& getenv);
StatusOr<std::optional<std::string>> readPathSetting(SettingId id, const Getenv& getenv);
// A free text's value (kText rows); its reader parses it.
StatusOr<std::optional<std::string>> readTextSetting(SettingId id, const Getenv& getenv);

}  // namespace peerreduce
