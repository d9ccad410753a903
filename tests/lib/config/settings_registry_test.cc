// The settings registry (config/settings_registry.h): one consistent row per PEERREDUCE_* setting, the
// fingerprint ranks compared before the registry existed, setting and reading Config fields by name, and
// the typed accessors other layers read their settings through.
#include "config/settings_registry.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "gpu/kernel_choice.h"
#include "text_contains.h"
#include "util/log.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

Getenv fakeEnvironment(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// Every field of Config away from its default.
Config everyFieldSet() {
  Config c;
  c.algorithm = Algorithm::kRing;
  c.timeout = std::chrono::milliseconds(1500);
  c.scratch_bytes = std::size_t{1} << 20;
  c.verify_plans = false;
  c.link_mask = "0-1,2-3";
  c.tuning_file = "/tmp/t.txt";
  c.memory.pool_bytes = std::size_t{128} << 20;
  c.memory.pool_quota_bytes = std::size_t{96} << 20;
  c.memory.pool_alignment_bytes = 4096;
  c.memory.defrag_threshold = 0.25;
  c.memory.pinned_limit_bytes = std::size_t{1} << 30;
  return c;
}

// Ranks built before and after the registry compare fingerprints at creation: the values are the ones
// the hand-written Config::fingerprint gave for the same settings.
TEST(SettingsRegistry, FingerprintIsTheOneRanksComputedBeforeTheRegistry) {
  // The default pool grew to 128 MiB (four channels' scratch), a fingerprinted setting: every rank of
  // this version computes the new value, and a rank of an earlier version is refused as a mismatch.
  EXPECT_EQ(Config{}.fingerprint(), 15244733574257077957ull);
  EXPECT_EQ(everyFieldSet().fingerprint(), 18054891748231099358ull);
}

// Each collective's own algorithm is part of the fingerprint when set (ranks must agree on it), and
// distinguishes which collective it forces.
TEST(SettingsRegistry, CollectiveAlgorithmsChangeTheFingerprintOnlyWhenSet) {
  Config a;
  a.reduce_scatter_algorithm = Algorithm::kRing;
  Config b;
  b.all_gather_algorithm = Algorithm::kRing;
  Config c;
  c.broadcast_algorithm = Algorithm::kTree;
  EXPECT_NE(a.fingerprint(), Config{}.fingerprint());
  EXPECT_NE(b.fingerprint(), Config{}.fingerprint());
  EXPECT_NE(c.fingerprint(), Config{}.fingerprint());
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  auto halving =
      Config::fromEnvironment(Config{}, fakeEnvironment({{"PEERREDUCE_ALGO_REDUCE_SCATTER", "recursive-halving"}}));
  ASSERT_TRUE(halving.isOk()) << halving.status().toString();
  EXPECT_EQ(halving->reduce_scatter_algorithm, Algorithm::kRecursiveDoubling);
  auto none = Config::fromEnvironment(Config{}, fakeEnvironment({{"PEERREDUCE_ALGO_BROADCAST", "recursive-doubling"}}));
  ASSERT_FALSE(none.isOk());
  EXPECT_TRUE(contains(none.status().message(), "PEERREDUCE_ALGO_BROADCAST")) << none.status().message();
  EXPECT_TRUE(contains(none.status().message(), "tree")) << none.status().message();
  auto two_shot = Config::fromEnvironment(Config{}, fakeEnvironment({{"PEERREDUCE_ALGO_ALL_GATHER", "two-shot"}}));
  EXPECT_EQ(two_shot.status().code(), ErrorCode::kInvalidArgument);
  // Broadcast's two-shot is its scatter + all-gather.
  auto scatter = Config::fromEnvironment(Config{}, fakeEnvironment({{"PEERREDUCE_ALGO_BROADCAST", "two-shot"}}));
  ASSERT_TRUE(scatter.isOk()) << scatter.status().toString();
  EXPECT_EQ(scatter->broadcast_algorithm, Algorithm::kTwoShot);
}

TEST(SettingsRegistry, RowsAreInIdOrderWithUniqueNames) {
  std::set<std::string> names;
  int index = 0;
  for (const SettingRow& row : settingRows()) {
    EXPECT_EQ(static_cast<int>(row.id), index++);
    ASSERT_NE(row.spec, nullptr);
    EXPECT_EQ(row.spec->name.rfind("PEERREDUCE_", 0), 0u) << row.spec->name;
    EXPECT_TRUE(names.insert(row.spec->name).second) << row.spec->name << " listed twice";
    EXPECT_EQ(findSettingRow(row.spec->name), &row);
    EXPECT_FALSE(row.spec->help.empty()) << row.spec->name;
    EXPECT_FALSE(row.spec->noun.empty() && row.spec->kind != SettingKind::kBoolean) << row.spec->name;
    EXPECT_EQ(row.boundToConfig(), row.owner == SettingOwner::kConfig || row.owner == SettingOwner::kMemory);
    EXPECT_EQ(row.set != nullptr, row.boundToConfig()) << row.spec->name;
  }
  EXPECT_EQ(index, kSettingCount);
  EXPECT_EQ(findSettingRow("PEERREDUCE_NOPE"), nullptr);
  EXPECT_EQ(settingRow(SettingId::kDebug).spec, &logLevelSetting());
}

// Defaults are valid, Config{} holds them, examples are valid other values, and canonical text reads back.
TEST(SettingsRegistry, DefaultsAndExamplesAreValidAndDistinct) {
  const Config defaults;
  for (const SettingRow& row : settingRows()) {
    const SettingSpec& s = *row.spec;
    SCOPED_TRACE(s.name);
    if (s.default_value) {
      EXPECT_TRUE(checkSettingValue(s, *s.default_value).isOk());
      auto back = parseSettingText(s, formatSettingValue(s, *s.default_value));
      ASSERT_TRUE(back.isOk()) << back.status().toString();
      EXPECT_EQ(*back, *s.default_value);
    } else {
      EXPECT_FALSE(s.default_note.empty()) << "a setting without a default says what applies";
    }
    if (row.boundToConfig()) {
      ASSERT_TRUE(s.default_value.has_value());
      EXPECT_EQ(row.get(defaults), *s.default_value) << "Config{} and the registry disagree on the default";
    }
    auto example = parseSettingText(s, s.example);
    ASSERT_TRUE(example.isOk()) << example.status().toString();
    if (s.default_value) {
      EXPECT_NE(*example, *s.default_value);
    }
  }
}

// The GPU transport's defaults are the registry's.
TEST(SettingsRegistry, GpuDefaultsAreTheTransports) {
  const gpu::GpuSettings gpu;
  const auto bytes = [](SettingId id) { return std::get<std::uint64_t>(*settingRow(id).spec->default_value); };
  const auto flag = [](SettingId id) { return std::get<bool>(*settingRow(id).spec->default_value); };
  EXPECT_EQ(bytes(SettingId::kGpuBytesPerBlock), gpu.bytes_per_block);
  EXPECT_EQ(bytes(SettingId::kGpuLineBytesPerBlock), gpu.line_bytes_per_block);
  EXPECT_EQ(bytes(SettingId::kGpuLowLatencyMaxBytes), gpu.kernels.max_bytes);
  EXPECT_EQ(bytes(SettingId::kGpuLowLatencyTwoShotMaxBytes), gpu.kernels.max_two_shot_bytes);
  EXPECT_EQ(bytes(SettingId::kGpuPushMinBytes), gpu.kernels.push_min_bytes);
  EXPECT_EQ(bytes(SettingId::kGpuPushOneShotMinBytes), gpu.kernels.push_one_shot_min_bytes);
  EXPECT_EQ(bytes(SettingId::kGpuPushOneShotPieceBytes), gpu.kernels.push_one_shot_piece_bytes);
  EXPECT_EQ(bytes(SettingId::kGpuPushStreamPieceBytes), gpu.kernels.push_stream_piece_bytes);
  EXPECT_EQ(bytes(SettingId::kGpuPushCollectiveMinBytes), gpu.kernels.push_collective_min_bytes);
  EXPECT_EQ(bytes(SettingId::kGpuCollectiveLinesMaxBytes), gpu.kernels.collective_max_bytes);
  EXPECT_EQ(bytes(SettingId::kGpuHostLinesMaxBytes), gpu.kernels.host_lines_max_bytes);
  EXPECT_EQ(flag(SettingId::kGpuFused), gpu.kernels.fused);
  EXPECT_EQ(flag(SettingId::kGpuPushStream), gpu.kernels.push_stream);
  EXPECT_EQ(flag(SettingId::kGpuPushHost), gpu.kernels.push_host);
  EXPECT_EQ(std::get<std::int64_t>(*settingRow(SettingId::kGpuPushCollectiveMaxRanks).spec->default_value),
            gpu.kernels.push_collective_max_ranks);
  EXPECT_EQ(flag(SettingId::kGpuOverlap), gpu.kernels.overlap_launch);
  EXPECT_FALSE(settingRow(SettingId::kGpuMaxBlocks).spec->default_value.has_value());
}

// Exactly the rows marked kFingerprint change the fingerprint.
TEST(SettingsRegistry, EveryFingerprintRowChangesTheFingerprint) {
  const std::uint64_t base = Config{}.fingerprint();
  for (const SettingRow& row : settingRows()) {
    if (!row.boundToConfig()) {
      EXPECT_NE(row.spec->agreement, SettingAgreement::kFingerprint) << row.spec->name << " is not in Config";
      continue;
    }
    Config changed;
    ASSERT_TRUE(setConfigSetting(changed, row.spec->name, row.spec->example).isOk()) << row.spec->name;
    EXPECT_EQ(changed.fingerprint() != base, row.spec->agreement == SettingAgreement::kFingerprint) << row.spec->name;
  }
}

// An empty PEERREDUCE_LINK_MASK or PEERREDUCE_TUNING_FILE replaced what code set with nothing, while every
// other empty variable counted as unset. Now every setting follows the one rule: empty = unset.
TEST(SettingsRegistry, EmptyValueOfEverySettingCountsAsUnset) {
  for (const SettingRow& row : settingRows()) {
    if (!row.boundToConfig()) continue;
    SCOPED_TRACE(row.spec->name);
    Config base;
    ASSERT_TRUE(setConfigSetting(base, row.spec->name, row.spec->example).isOk());
    auto config = Config::fromEnvironment(base, fakeEnvironment({{row.spec->name, ""}}));
    ASSERT_TRUE(config.isOk()) << config.status().toString();
    EXPECT_EQ(row.get(*config), row.get(base)) << "the empty variable changed the value from code";
  }
  for (const SettingRow& row : settingRows()) {
    if (row.boundToConfig()) continue;
    auto value = readSetting(*row.spec, fakeEnvironment({{row.spec->name, ""}}));
    ASSERT_TRUE(value.isOk()) << row.spec->name;
    EXPECT_FALSE(value->has_value()) << row.spec->name;
  }
}

TEST(SettingsRegistry, ConfigSettingsAreSetAndReadByName) {
  Config config;
  ASSERT_TRUE(setConfigSetting(config, "PEERREDUCE_POOL_BYTES", "256M").isOk());
  EXPECT_EQ(config.memory.pool_bytes, std::size_t{256} << 20);
  EXPECT_EQ(*getConfigSetting(config, "PEERREDUCE_POOL_BYTES"), "268435456");
  ASSERT_TRUE(setConfigSetting(config, "PEERREDUCE_ALGO", "tree").isOk());
  EXPECT_EQ(config.algorithm, Algorithm::kTree);
  EXPECT_EQ(*getConfigSetting(config, "PEERREDUCE_ALGO"), "tree");
  ASSERT_TRUE(setConfigSetting(config, "PEERREDUCE_VERIFY_PLANS", "off").isOk());
  EXPECT_EQ(*getConfigSetting(config, "PEERREDUCE_VERIFY_PLANS"), "0");
  ASSERT_TRUE(setConfigSetting(config, "PEERREDUCE_LINK_MASK", "0-1").isOk());
  ASSERT_TRUE(setConfigSetting(config, "PEERREDUCE_LINK_MASK", "").isOk()) << "empty text clears the mask";
  EXPECT_EQ(config.link_mask, "");

  const Config before = config;
  const Status bad = setConfigSetting(config, "PEERREDUCE_POOL_BYTES", "3M");
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(bad.message(), "PEERREDUCE_POOL_BYTES='3M'")) << bad.message();
  EXPECT_EQ(config.fingerprint(), before.fingerprint()) << "a refused value changes nothing";
  EXPECT_EQ(setConfigSetting(config, "PEERREDUCE_TIMEOUT_MS", "").code(), ErrorCode::kInvalidArgument);

  const Status unknown = setConfigSetting(config, "PEERREDUCE_POOL_SIZE", "1M");
  EXPECT_EQ(unknown.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(unknown.message(), "unknown setting 'PEERREDUCE_POOL_SIZE'")) << unknown.message();
  EXPECT_TRUE(contains(unknown.message(), "PEERREDUCE_POOL_BYTES")) << unknown.message();
  const Status elsewhere = setConfigSetting(config, "PEERREDUCE_GPU_FUSED", "0");
  EXPECT_EQ(elsewhere.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(elsewhere.message(), "read by the GPU transport")) << elsewhere.message();
  EXPECT_FALSE(getConfigSetting(config, "PEERREDUCE_DEBUG").isOk());
}

TEST(SettingsRegistry, TypedAccessorsReadTheirRowsAndRefuseAnotherKind) {
  const Getenv env = fakeEnvironment(
      {{"PEERREDUCE_GPU_MAX_BLOCKS", "7"}, {"PEERREDUCE_GPU_PUSH_MIN_BYTES", "4M"}, {"PEERREDUCE_GPU_FUSED", ""}});
  EXPECT_EQ(**readIntegerSetting(SettingId::kGpuMaxBlocks, env), 7);
  EXPECT_EQ(**readByteSizeSetting(SettingId::kGpuPushMinBytes, env), std::uint64_t{4} << 20);
  EXPECT_FALSE(readBooleanSetting(SettingId::kGpuFused, env)->has_value()) << "empty counts as unset";
  EXPECT_FALSE(readByteSizeSetting(SettingId::kGpuBytesPerBlock, env)->has_value());
  EXPECT_EQ(readByteSizeSetting(SettingId::kGpuMaxBlocks, env).status().code(), ErrorCode::kInternal);
}

TEST(SettingsRegistry, ApplyEnvironmentTouchesOnlyTheOwnersRows) {
  const Getenv env = fakeEnvironment({{"PEERREDUCE_POOL_BYTES", "256M"}, {"PEERREDUCE_ALGO", "ring"}});
  Config memory_only;
  ASSERT_TRUE(applyEnvironment(memory_only, SettingOwner::kMemory, env).isOk());
  EXPECT_EQ(memory_only.memory.pool_bytes, std::size_t{256} << 20);
  EXPECT_EQ(memory_only.algorithm, Algorithm::kAuto);
  Config config_only;
  ASSERT_TRUE(applyEnvironment(config_only, SettingOwner::kConfig, env).isOk());
  EXPECT_EQ(config_only.algorithm, Algorithm::kRing);
  EXPECT_EQ(config_only.memory.pool_bytes, kDefaultPoolBytes);
}

}  // namespace
}  // namespace peerreduce
