// prConfig_t (api/c_config.cc): every setting C++'s Config has is a field, an initialised prConfig_t means
// what a NULL one means (compared through the communicators' C++ side), and prConfigSet / prConfigGet
// reach every field by setting name through the settings registry.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "api/c_api_internal.h"
#include "config/settings_registry.h"
#include "peerreduce/peerreduce_sim.h"
#include "plan/plan_text.h"
#include "scoped_env.h"
#include "text_contains.h"

namespace peerreduce::capi {
namespace {

using testing::ScopedEnv;

using peerreduce::testing::contains;

// The settings a communicator is created with, as its C++ side sees them.
struct Created {
  prResult_t result = prInternalError;
  std::string message;
  std::string describe;
  std::uint64_t fingerprint = 0;
  bool link_0_1 = true;
};

Created createWorld(int ranks, const prConfig_t* config) {
  Created out;
  prSimWorld_t world = nullptr;
  if (prSimWorldCreate(ranks, 5, &world) != prSuccess) {
    out.message = prGetLastError();
    return out;
  }
  std::vector<prComm_t> comms(static_cast<std::size_t>(ranks), nullptr);
  out.result = prCommInitSimAll(world, config, comms.data());
  out.message = out.result == prSuccess ? "" : prGetLastError();
  if (out.result == prSuccess) {
    const Communicator& comm = *comms[0]->comm;
    out.describe = comm.config().describe();
    out.fingerprint = comm.config().fingerprint();
    out.link_0_1 = comm.topology().link(0, 1).connected();
    for (prComm_t c : comms) EXPECT_EQ(prCommDestroy(c), prSuccess) << prGetLastError();
  }
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess) << prGetLastError();
  return out;
}

// Unsets every variable prConfigInit reads, so the environment CI runs in does not take part.
class CleanConfigEnvironment {
 public:
  CleanConfigEnvironment() {
    for (const SettingRow& row : settingRows()) {
      if (row.boundToConfig()) cleared_.emplace_back(std::make_unique<ScopedEnv>(row.spec->name, std::nullopt));
    }
  }

 private:
  std::vector<std::unique_ptr<ScopedEnv>> cleared_;
};

// A tuning table that turns measured choices off (a header alone): valid for any world.
std::string headerOnlyTuningFile() {
  const std::string path = (std::filesystem::temp_directory_path() / "peerreduce_c_config_tuning.txt").string();
  std::ofstream(path) << "peerreduce-tuning 1\n";
  return path;
}

// A plan file for four ranks (a shipped plan written out), valid wherever the world has four.
std::string fourRankPlanFile() {
  const std::string path = (std::filesystem::temp_directory_path() / "peerreduce_c_config_plan.plan").string();
  std::ofstream(path) << formatPlanText(buildPlan(PlanRequest{Algorithm::kOneShot, 4, false}).value());
  return path;
}

// Bindings that hold prConfig_t as bytes ask its size; a wrong size is refused by name.
TEST(CApiConfig, BindingsLearnTheStructSizeAndAWrongSizeIsRefused) {
  EXPECT_EQ(prConfigSize(), sizeof(prConfig_t));
  std::vector<unsigned char> bytes(prConfigSize() + 64, 0);
  auto* config = reinterpret_cast<prConfig_t*>(bytes.data());
  EXPECT_EQ(prConfigInitSized(config, prConfigSize() + 8), prInvalidArgument);
  EXPECT_NE(std::string(prGetLastError()).find("is not this library's"), std::string::npos) << prGetLastError();
  EXPECT_EQ(prConfigInitSized(config, prConfigSize()), prSuccess) << prGetLastError();
  EXPECT_EQ(config->struct_size, sizeof(prConfig_t));
}

TEST(CApiConfig, EveryConfigSettingOfTheRegistryIsAField) {
  std::set<SettingId> bound;
  for (const SettingRow& row : settingRows()) {
    if (row.boundToConfig()) bound.insert(row.id);
  }
  const auto fields = configFieldSettings();
  EXPECT_EQ(std::set<SettingId>(fields.begin(), fields.end()), bound);
  EXPECT_EQ(fields.size(), bound.size()) << "a setting held by two fields";
}

// The C API dropped settings: a non-NULL prConfig_t carried four of Config's fields, so the pool settings,
// the link mask and the tuning file set in the environment were applied with NULL and silently ignored
// with prConfigInit's struct. For every setting: the same configuration both ways, and not the default.
TEST(CApiConfig, InitialisedConfigMeansWhatNullMeansForEverySetting) {
  const CleanConfigEnvironment clean;
  const Created defaults = createWorld(4, nullptr);
  ASSERT_EQ(defaults.result, prSuccess) << defaults.message;
  const std::string tuning = headerOnlyTuningFile();
  const std::string plan = fourRankPlanFile();
  for (const SettingRow& row : settingRows()) {
    if (!row.boundToConfig()) continue;
    const std::string value = row.id == SettingId::kTuningFile ? tuning
                              : row.id == SettingId::kPlanFile ? plan
                                                               : row.spec->example;
    SCOPED_TRACE(row.spec->name + "=" + value);
    const ScopedEnv set(row.spec->name, value);
    const Created with_null = createWorld(4, nullptr);
    ASSERT_EQ(with_null.result, prSuccess) << with_null.message;
    prConfig_t config{};
    ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
    const Created with_config = createWorld(4, &config);
    ASSERT_EQ(with_config.result, prSuccess) << with_config.message;
    EXPECT_EQ(with_config.describe, with_null.describe);
    EXPECT_EQ(with_config.fingerprint, with_null.fingerprint);
    EXPECT_NE(with_null.describe, defaults.describe) << "the setting did not reach the communicator";
  }
  std::filesystem::remove(tuning);
}

// The report's case: a scratch that needs a larger pool, with the pool raised in the environment.
TEST(CApiConfig, PoolRaisedInTheEnvironmentHoldsTheScratchThroughAnInitialisedConfig) {
  const CleanConfigEnvironment clean;
  const ScopedEnv scratch("PEERREDUCE_SCRATCH_BYTES", "128M");
  const ScopedEnv pool("PEERREDUCE_POOL_BYTES", "256M");
  const Created with_null = createWorld(2, nullptr);
  ASSERT_EQ(with_null.result, prSuccess) << with_null.message;
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  EXPECT_EQ(config.pool_bytes, std::size_t{256} << 20);
  const Created with_config = createWorld(2, &config);
  ASSERT_EQ(with_config.result, prSuccess) << with_config.message;
  EXPECT_TRUE(contains(with_config.describe, "pool_bytes=268435456")) << with_config.describe;
  EXPECT_EQ(with_config.fingerprint, with_null.fingerprint);
}

TEST(CApiConfig, LinkMaskFromTheEnvironmentIsAppliedThroughAnInitialisedConfig) {
  const CleanConfigEnvironment clean;
  const ScopedEnv mask("PEERREDUCE_LINK_MASK", "0-1");
  const Created with_null = createWorld(3, nullptr);
  ASSERT_EQ(with_null.result, prSuccess) << with_null.message;
  EXPECT_FALSE(with_null.link_0_1);
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  EXPECT_STREQ(config.link_mask, "0-1");
  const Created with_config = createWorld(3, &config);
  ASSERT_EQ(with_config.result, prSuccess) << with_config.message;
  EXPECT_FALSE(with_config.link_0_1) << "the mask was ignored";
}

TEST(CApiConfig, SetAndGetReachEveryFieldByNameAndReadBackTheSameValue) {
  const CleanConfigEnvironment clean;
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  Config expected;
  for (const SettingRow& row : settingRows()) {
    if (!row.boundToConfig()) continue;
    SCOPED_TRACE(row.spec->name);
    ASSERT_EQ(prConfigSet(&config, row.spec->name.c_str(), row.spec->example.c_str()), prSuccess) << prGetLastError();
    ASSERT_TRUE(setConfigSetting(expected, row.spec->name, row.spec->example).isOk());
    char text[PR_CONFIG_LINK_MASK_BYTES];
    ASSERT_EQ(prConfigGet(&config, row.spec->name.c_str(), text, sizeof(text)), prSuccess) << prGetLastError();
    EXPECT_EQ(std::string(text), *getConfigSetting(expected, row.spec->name));
  }
  auto converted = toConfig(&config);
  ASSERT_TRUE(converted.isOk()) << converted.status().toString();
  EXPECT_EQ(converted->describe(), expected.describe());
  EXPECT_EQ(converted->fingerprint(), expected.fingerprint());
  auto back = fromConfig(*converted);
  ASSERT_TRUE(back.isOk());
  EXPECT_EQ(back->pool_quota_bytes, config.pool_quota_bytes);
  EXPECT_STREQ(back->link_mask, config.link_mask);
}

TEST(CApiConfig, SetRefusesUnknownNamesOtherLayersSettingsAndBadValuesAndChangesNothing) {
  const CleanConfigEnvironment clean;
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  const std::size_t pool = config.pool_bytes;
  EXPECT_EQ(prConfigSet(&config, "PEERREDUCE_POOL_BYTES", "3M"), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "prConfigSet: invalid argument: PEERREDUCE_POOL_BYTES='3M'"))
      << prGetLastError();
  EXPECT_EQ(config.pool_bytes, pool);
  EXPECT_EQ(prConfigSet(&config, "POOL_BYTES", "128M"), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "unknown setting 'POOL_BYTES'")) << prGetLastError();
  EXPECT_EQ(prConfigSet(&config, "PEERREDUCE_GPU_FUSED", "0"), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "read by the GPU transport")) << prGetLastError();
  EXPECT_EQ(prConfigSet(&config, "PEERREDUCE_TIMEOUT_MS", ""), prInvalidArgument);
  EXPECT_EQ(config.device, PR_DEVICE_CURRENT) << "NCCL's rule by default: the creating thread's device";
  EXPECT_EQ(prConfigSet(&config, "PEERREDUCE_DEVICE", "-3"), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "PEERREDUCE_DEVICE='-3'")) << prGetLastError();
  ASSERT_EQ(prConfigSet(&config, "PEERREDUCE_DEVICE", "-2"), prSuccess) << prGetLastError();
  EXPECT_EQ(config.device, PR_DEVICE_OF_LOCAL_RANK);
  ASSERT_EQ(prConfigSet(&config, "PEERREDUCE_DEVICE", "3"), prSuccess) << prGetLastError();
  EXPECT_EQ(config.device, 3);
  EXPECT_EQ(prConfigSet(nullptr, "PEERREDUCE_TIMEOUT_MS", "5"), prInvalidArgument);
  EXPECT_EQ(prConfigSet(&config, nullptr, "5"), prInvalidArgument);
  EXPECT_EQ(prConfigSet(&config, "PEERREDUCE_TIMEOUT_MS", nullptr), prInvalidArgument);

  // A path longer than any the system opens: a typed error naming the setting, the field untouched.
  ASSERT_EQ(prConfigSet(&config, "PEERREDUCE_TUNING_FILE", "short.txt"), prSuccess);
  const std::string long_path(PR_CONFIG_PATH_BYTES, 'p');
  EXPECT_EQ(prConfigSet(&config, "PEERREDUCE_TUNING_FILE", long_path.c_str()), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "tuning file path of 4096 characters exceeds 4095")) << prGetLastError();
  EXPECT_STREQ(config.tuning_file, "short.txt");
  ASSERT_EQ(prConfigSet(&config, "PEERREDUCE_TUNING_FILE", ""), prSuccess) << "empty text clears the path";
  EXPECT_STREQ(config.tuning_file, "");
}

TEST(CApiConfig, GetNeedsRoomForTheValueAndWritesNothingOtherwise) {
  const CleanConfigEnvironment clean;
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  char small[4] = {'x', 'x', 'x', 'x'};
  EXPECT_EQ(prConfigGet(&config, "PEERREDUCE_TIMEOUT_MS", small, sizeof(small)), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "needs 6 bytes (NUL included)")) << prGetLastError();
  EXPECT_EQ(small[0], 'x');
  char text[16];
  ASSERT_EQ(prConfigGet(&config, "PEERREDUCE_ALGO", text, sizeof(text)), prSuccess);
  EXPECT_STREQ(text, "auto");
  EXPECT_EQ(prConfigGet(&config, "PEERREDUCE_DEBUG", text, sizeof(text)), prInvalidArgument);
  EXPECT_EQ(prConfigGet(nullptr, "PEERREDUCE_ALGO", text, sizeof(text)), prInvalidArgument);
  EXPECT_EQ(prConfigGet(&config, "PEERREDUCE_ALGO", nullptr, 0), prInvalidArgument);
}

TEST(CApiConfig, StructNotFilledByInitOrOfAnotherSizeIsRefusedByName) {
  prConfig_t zeroed{};
  auto refused = toConfig(&zeroed);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(refused.status().message(), "prConfig_t.struct_size is 0: fill the struct with prConfigInit()"))
      << refused.status().message();
  EXPECT_EQ(prConfigSet(&zeroed, "PEERREDUCE_ALGO", "ring"), prInvalidArgument);

  prConfig_t config{};
  EXPECT_EQ(prConfigInitSized(&config, sizeof(prConfig_t) - 8), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "build against the peerreduce.h")) << prGetLastError();
  EXPECT_EQ(config.struct_size, 0u) << "nothing written";
  ASSERT_EQ(prConfigInit(&config), prSuccess);
  config.struct_size += 8;
  EXPECT_FALSE(toConfig(&config).isOk());
}

TEST(CApiConfig, TextFieldWithoutItsTerminatorIsRefusedAtCreation) {
  const CleanConfigEnvironment clean;
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess);
  std::memset(config.link_mask, '1', sizeof(config.link_mask));
  const Created created = createWorld(2, &config);
  EXPECT_EQ(created.result, prInvalidArgument);
  EXPECT_TRUE(contains(created.message, "prConfig_t.link_mask is not NUL-terminated within its 16385 bytes"))
      << created.message;
}

}  // namespace
}  // namespace peerreduce::capi
