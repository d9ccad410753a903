// MemorySettings' environment and validation (declared in peerreduce/memory.h): the settings registry's
// memory rows (config/settings_registry.h), plus the one rule that spans two of them. They live with the
// registry, above the memory layer, which itself only reads the fields.
#include "config/settings_registry.h"
#include "peerreduce/memory.h"

namespace peerreduce {

StatusOr<MemorySettings> MemorySettings::fromEnvironment(const MemorySettings& base,
                                                         const std::function<const char*(const char*)>& getenv) {
  Config holder;
  holder.memory = base;
  PR_RETURN_IF_ERROR(applyEnvironment(holder, SettingOwner::kMemory, getenv));
  PR_RETURN_IF_ERROR(holder.memory.validate());
  return holder.memory;
}

Status MemorySettings::validate() const {
  Config holder;
  holder.memory = *this;
  for (const SettingRow& row : settingRows()) {
    if (row.owner != SettingOwner::kMemory) continue;
    PR_RETURN_IF_ERROR(checkSettingValue(*row.spec, row.get(holder)));
    if (row.id == SettingId::kPoolQuotaBytes && pool_quota_bytes > pool_bytes) {
      return invalidArgumentError("pool quota of " + std::to_string(pool_quota_bytes) +
                                  " bytes exceeds the pool size of " + std::to_string(pool_bytes) +
                                  " (PEERREDUCE_POOL_QUOTA_BYTES; 0 = no quota, or raise PEERREDUCE_POOL_BYTES)");
    }
  }
  return Status::ok();
}

}  // namespace peerreduce
