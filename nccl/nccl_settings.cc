#include "nccl/nccl_settings.h"

#include "config/settings_registry.h"
#include "nccl/builtin_take_table.h"
#include "nccl/library_loader.h"
#include "util/hash.h"

namespace peerreduce::nccl {

std::uint64_t NcclSettings::agreedFingerprint() const {
  Fnv1a hash;
  hash.add(static_cast<int>(take.mode));
  hash.add(take.max_bytes);
  hash.add(take.take_avg);
  // The rows as text: two files with the same rows agree, whatever their comments and order.
  hash.addString(take_table != nullptr ? take_table->format() : std::string());
  hash.add(simulate_seed.has_value());
  hash.add(simulate_seed.value_or(0));
  return hash.value();
}

StatusOr<NcclSettings> readNcclSettings(const Getenv& getenv) {
  NcclSettings settings;
  PR_ASSIGN_OR_RETURN(auto mode, readChoiceSetting(SettingId::kNcclTake, getenv));
  if (mode) settings.take.mode = static_cast<TakeMode>(*mode);
  PR_ASSIGN_OR_RETURN(auto max_bytes, readByteSizeSetting(SettingId::kNcclMaxBytes, getenv));
  if (max_bytes) settings.take.max_bytes = *max_bytes;
  PR_ASSIGN_OR_RETURN(auto take_avg, readBooleanSetting(SettingId::kNcclTakeAvg, getenv));
  settings.take.take_avg = take_avg.value_or(true);
  PR_ASSIGN_OR_RETURN(auto table_path, readPathSetting(SettingId::kNcclTakeTable, getenv));
  if (table_path && !table_path->empty()) {
    PR_ASSIGN_OR_RETURN(TakeTable table, TakeTable::load(*table_path, "PEERREDUCE_NCCL_TAKE_TABLE"));
    settings.take_table = std::make_shared<const TakeTable>(std::move(table));
  } else {
    // The built-in table lives as long as the library: shared without an owner.
    settings.take_table = std::shared_ptr<const TakeTable>(std::shared_ptr<const TakeTable>(), &builtinTakeTable());
  }
  PR_ASSIGN_OR_RETURN(auto timeout, readIntegerSetting(SettingId::kTimeoutMs, getenv));
  settings.timeout_ms = timeout.value_or(kNcclTimeoutMs);
  PR_ASSIGN_OR_RETURN(auto summary, readBooleanSetting(SettingId::kNcclSummary, getenv));
  settings.summary = summary.value_or(false);
  PR_ASSIGN_OR_RETURN(auto seed, readIntegerSetting(SettingId::kNcclSimulate, getenv));
  if (seed) settings.simulate_seed = static_cast<std::uint64_t>(*seed);
  return settings;
}

StatusOr<LibraryChoice> readLibraryChoice(const Getenv& getenv) {
  PR_ASSIGN_OR_RETURN(auto path, readPathSetting(SettingId::kNcclLibrary, getenv));
  if (path && !path->empty()) return LibraryChoice{*path, true};
  return LibraryChoice{kNcclSoname, false};
}

}  // namespace peerreduce::nccl
