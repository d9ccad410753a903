// Config (peerreduce/config.h): byte sizes, the PEERREDUCE_* environment (through the injectable
// getenv), range validation, and a fingerprint that changes with every setting ranks must agree on.
#include "peerreduce/config.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "scoped_env.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

// A fake environment: only the variables in the map exist.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  const char* operator()(const char* name) const {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  }
};

StatusOr<Config> fromFake(std::map<std::string, std::string> vars, const Config& base = Config{}) {
  FakeEnv env{std::move(vars)};
  return Config::fromEnvironment(base, [&env](const char* name) { return env(name); });
}

using peerreduce::testing::contains;

TEST(ParseByteSize, AcceptsPlainNumbersAndBinarySuffixes) {
  const struct {
    const char* text;
    std::size_t bytes;
  } cases[] = {
      {"0", 0},
      {"1048576", 1048576},
      {"17B", 17},
      {"64K", 64u << 10},
      {"64k", 64u << 10},
      {"64KiB", 64u << 10},
      {"32M", 32u << 20},
      {"32MiB", 32u << 20},
      {"1G", std::size_t{1} << 30},
      {"3GiB", std::size_t{3} << 30},
      {"18446744073709551615", std::numeric_limits<std::size_t>::max()},
  };
  for (const auto& c : cases) {
    auto parsed = parseByteSize(c.text);
    ASSERT_TRUE(parsed.isOk()) << c.text << ": " << parsed.status().toString();
    EXPECT_EQ(*parsed, c.bytes) << c.text;
  }
}

TEST(ParseByteSize, RejectsTextWithoutANumberOrWithAnUnknownSuffix) {
  for (const char* text : {"", "M", "-5", "+5", " 5", "abc"}) {
    auto parsed = parseByteSize(text);
    ASSERT_FALSE(parsed.isOk()) << text;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(parsed.status().message(), "does not start with a number")) << parsed.status().message();
  }
  for (const char* text : {"5T", "5 M", "5mb", "5KB", "5m"}) {
    auto parsed = parseByteSize(text);
    ASSERT_FALSE(parsed.isOk()) << text;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(parsed.status().message(), "unknown suffix")) << parsed.status().message();
    EXPECT_TRUE(contains(parsed.status().message(), "KiB, MiB or GiB")) << parsed.status().message();
  }
}

TEST(ParseByteSize, RejectsValuesThatOverflowInsteadOfWrapping) {
  // One more than SIZE_MAX in digits, and values whose suffix shift overflows.
  for (const char* text : {"18446744073709551616", "99999999999999999999999", "17179869184G", "18014398509481984K"}) {
    auto parsed = parseByteSize(text);
    ASSERT_FALSE(parsed.isOk()) << text << " parsed as " << (parsed.isOk() ? *parsed : 0);
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(parsed.status().message(), "overflows")) << parsed.status().message();
  }
  // The largest values that still fit.
  EXPECT_TRUE(parseByteSize("17179869183G").isOk());
  EXPECT_TRUE(parseByteSize("18014398509481983K").isOk());
}

TEST(ConfigDefaults, AreValidAndDescribed) {
  const Config config;
  EXPECT_TRUE(config.validate().isOk());
  EXPECT_EQ(config.algorithm, Algorithm::kAuto);
  EXPECT_EQ(config.timeout.count(), kDefaultTimeoutMs);
  EXPECT_EQ(config.scratch_bytes, kDefaultScratchBytes);
  EXPECT_TRUE(config.verify_plans);
  EXPECT_EQ(config.describe(), "algorithm=auto timeout_ms=30000 scratch_bytes=33554432 verify_plans=1");
}

TEST(ConfigFromEnvironment, AppliesEveryVariableOverTheBase) {
  Config base;
  base.algorithm = Algorithm::kRing;
  auto config = fromFake({{"PEERREDUCE_ALGO", "two-shot"},
                          {"PEERREDUCE_TIMEOUT_MS", "1500"},
                          {"PEERREDUCE_SCRATCH_BYTES", "1M"},
                          {"PEERREDUCE_VERIFY_PLANS", "0"}},
                         base);
  ASSERT_TRUE(config.isOk()) << config.status().toString();
  EXPECT_EQ(config->algorithm, Algorithm::kTwoShot);
  EXPECT_EQ(config->timeout.count(), 1500);
  EXPECT_EQ(config->scratch_bytes, std::size_t{1} << 20);
  EXPECT_FALSE(config->verify_plans);
  EXPECT_EQ(config->describe(), "algorithm=two-shot timeout_ms=1500 scratch_bytes=1048576 verify_plans=0");
}

TEST(ConfigFromEnvironment, UnsetOrEmptyVariablesKeepTheBase) {
  Config base;
  base.algorithm = Algorithm::kRabenseifner;
  base.timeout = std::chrono::milliseconds(77);
  base.verify_plans = false;
  for (const auto& vars :
       {std::map<std::string, std::string>{}, std::map<std::string, std::string>{{"PEERREDUCE_ALGO", ""},
                                                                                 {"PEERREDUCE_TIMEOUT_MS", ""},
                                                                                 {"PEERREDUCE_SCRATCH_BYTES", ""},
                                                                                 {"PEERREDUCE_VERIFY_PLANS", ""}}}) {
    auto config = fromFake(vars, base);
    ASSERT_TRUE(config.isOk()) << config.status().toString();
    EXPECT_EQ(config->fingerprint(), base.fingerprint());
  }
}

TEST(ConfigFromEnvironment, VerifyPlansAcceptsItsSpellings) {
  for (const char* on : {"1", "true", "on"}) {
    Config base;
    base.verify_plans = false;
    auto config = fromFake({{"PEERREDUCE_VERIFY_PLANS", on}}, base);
    ASSERT_TRUE(config.isOk()) << on;
    EXPECT_TRUE(config->verify_plans) << on;
  }
  for (const char* off : {"0", "false", "off"}) {
    auto config = fromFake({{"PEERREDUCE_VERIFY_PLANS", off}});
    ASSERT_TRUE(config.isOk()) << off;
    EXPECT_FALSE(config->verify_plans) << off;
  }
}

// Each malformed value: kInvalidArgument naming the variable and the value.
TEST(ConfigFromEnvironment, MalformedValuesNameTheVariableAndValue) {
  const struct {
    const char* name;
    const char* value;
    const char* says;
  } cases[] = {
      {"PEERREDUCE_ALGO", "fastest", "unknown algorithm 'fastest'"},
      {"PEERREDUCE_TIMEOUT_MS", "10s", "is not a whole number"},
      {"PEERREDUCE_TIMEOUT_MS", "-1", "is not a whole number"},
      {"PEERREDUCE_TIMEOUT_MS", "0", "outside 1..86400000"},
      {"PEERREDUCE_TIMEOUT_MS", "86400001", "outside 1..86400000"},
      {"PEERREDUCE_TIMEOUT_MS", "99999999999999999999", "too large"},
      {"PEERREDUCE_SCRATCH_BYTES", "lots", "does not start with a number"},
      {"PEERREDUCE_SCRATCH_BYTES", "1T", "unknown suffix"},
      {"PEERREDUCE_SCRATCH_BYTES", "1K", "outside 65536.."},
      {"PEERREDUCE_SCRATCH_BYTES", "65G", "outside 65536.."},
      {"PEERREDUCE_VERIFY_PLANS", "yes", "'yes' is not 1/0/true/false/on/off"},
  };
  for (const auto& c : cases) {
    auto config = fromFake({{c.name, c.value}});
    ASSERT_FALSE(config.isOk()) << c.name << "=" << c.value;
    EXPECT_EQ(config.status().code(), ErrorCode::kInvalidArgument);
    const std::string& message = config.status().message();
    EXPECT_TRUE(contains(message, c.name)) << message;
    EXPECT_TRUE(contains(message, c.says)) << message;
  }
}

TEST(ConfigFromEnvironment, BoundaryValuesAreAccepted) {
  auto low = fromFake({{"PEERREDUCE_TIMEOUT_MS", "1"}, {"PEERREDUCE_SCRATCH_BYTES", "64K"}});
  ASSERT_TRUE(low.isOk()) << low.status().toString();
  EXPECT_EQ(low->timeout.count(), 1);
  EXPECT_EQ(low->scratch_bytes, kMinScratchBytes);
  auto high = fromFake({{"PEERREDUCE_TIMEOUT_MS", "86400000"}, {"PEERREDUCE_SCRATCH_BYTES", "64G"}});
  ASSERT_TRUE(high.isOk()) << high.status().toString();
  EXPECT_EQ(high->timeout.count(), kMaxTimeoutMs);
  EXPECT_EQ(high->scratch_bytes, kMaxScratchBytes);
}

// An invalid base that the environment does not fix is reported, not passed on.
TEST(ConfigFromEnvironment, InvalidBaseIsRejected) {
  Config base;
  base.timeout = std::chrono::milliseconds(0);
  auto config = fromFake({}, base);
  ASSERT_FALSE(config.isOk());
  EXPECT_TRUE(contains(config.status().message(), "timeout of 0 ms")) << config.status().message();
}

using testing::ScopedEnv;

TEST(ConfigFromEnvironment, WithoutArgumentsReadsTheProcessEnvironment) {
  ScopedEnv algo("PEERREDUCE_ALGO", "ring");
  ScopedEnv timeout("PEERREDUCE_TIMEOUT_MS", std::nullopt);
  ScopedEnv scratch("PEERREDUCE_SCRATCH_BYTES", "2M");
  ScopedEnv verify("PEERREDUCE_VERIFY_PLANS", std::nullopt);
  auto config = Config::fromEnvironment();
  ASSERT_TRUE(config.isOk()) << config.status().toString();
  EXPECT_EQ(config->algorithm, Algorithm::kRing);
  EXPECT_EQ(config->timeout.count(), kDefaultTimeoutMs);
  EXPECT_EQ(config->scratch_bytes, std::size_t{2} << 20);

  ScopedEnv bad("PEERREDUCE_ALGO", "nope");
  EXPECT_EQ(Config::fromEnvironment(Config{}).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ConfigValidate, NamesTheSettingOutOfRange) {
  Config bad_algorithm;
  bad_algorithm.algorithm = static_cast<Algorithm>(kAlgorithmCount);
  EXPECT_TRUE(contains(bad_algorithm.validate().message(),
                       "algorithm value " + std::to_string(kAlgorithmCount) + " is not valid"));

  Config bad_timeout;
  bad_timeout.timeout = std::chrono::milliseconds(kMaxTimeoutMs + 1);
  EXPECT_TRUE(contains(bad_timeout.validate().message(), "PEERREDUCE_TIMEOUT_MS"));
  bad_timeout.timeout = std::chrono::milliseconds(-5);
  EXPECT_TRUE(contains(bad_timeout.validate().message(), "timeout of -5 ms"));

  Config bad_scratch;
  bad_scratch.scratch_bytes = kMinScratchBytes - 1;
  EXPECT_TRUE(contains(bad_scratch.validate().message(), "PEERREDUCE_SCRATCH_BYTES"));
  bad_scratch.scratch_bytes = kMaxScratchBytes + 1;
  EXPECT_EQ(bad_scratch.validate().code(), ErrorCode::kInvalidArgument);
}

TEST(ConfigFingerprint, ChangesWithEverySettingAndOnlyThen) {
  const Config base;
  EXPECT_EQ(base.fingerprint(), Config{}.fingerprint());
  Config a = base;
  a.algorithm = Algorithm::kOneShot;
  Config t = base;
  t.timeout = std::chrono::milliseconds(kDefaultTimeoutMs + 1);
  Config s = base;
  s.scratch_bytes = kDefaultScratchBytes * 2;
  Config v = base;
  v.verify_plans = false;
  const std::uint64_t prints[] = {base.fingerprint(), a.fingerprint(), t.fingerprint(), s.fingerprint(),
                                  v.fingerprint()};
  for (std::size_t i = 0; i < 5; ++i) {
    for (std::size_t j = i + 1; j < 5; ++j) EXPECT_NE(prints[i], prints[j]) << i << " vs " << j;
  }
}

TEST(ConfigMemory, EnvironmentSetsThePoolSettingsAndTheyAreDescribedOnlyWhenNotDefault) {
  EXPECT_EQ(Config{}.memory, MemorySettings{});
  auto config = fromFake({{"PEERREDUCE_POOL_BYTES", "256M"},
                          {"PEERREDUCE_POOL_QUOTA_BYTES", "96M"},
                          {"PEERREDUCE_POOL_ALIGNMENT", "4K"},
                          {"PEERREDUCE_POOL_DEFRAG_THRESHOLD", "0.25"},
                          {"PEERREDUCE_PINNED_LIMIT_BYTES", "1G"}});
  ASSERT_TRUE(config.isOk()) << config.status().toString();
  EXPECT_EQ(config->memory.pool_bytes, std::size_t{256} << 20);
  EXPECT_EQ(config->memory.pool_quota_bytes, std::size_t{96} << 20);
  EXPECT_EQ(config->memory.pool_alignment_bytes, std::size_t{4} << 10);
  EXPECT_EQ(config->memory.defrag_threshold, 0.25);
  EXPECT_EQ(config->memory.pinned_limit_bytes, std::size_t{1} << 30);
  EXPECT_TRUE(contains(config->describe(), " pool_bytes=268435456 pool_quota_bytes=100663296")) << config->describe();
  EXPECT_FALSE(contains(Config{}.describe(), "pool_bytes")) << Config{}.describe();
}

TEST(ConfigMemory, BadPoolSettingsNameTheVariableFromTheEnvironmentAndFromCode) {
  auto bad_env = fromFake({{"PEERREDUCE_POOL_BYTES", "3M"}});
  ASSERT_FALSE(bad_env.isOk());
  EXPECT_EQ(bad_env.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(bad_env.status().message(), "PEERREDUCE_POOL_BYTES")) << bad_env.status().message();
  auto bad_threshold = fromFake({{"PEERREDUCE_POOL_DEFRAG_THRESHOLD", "high"}});
  ASSERT_FALSE(bad_threshold.isOk());
  EXPECT_TRUE(contains(bad_threshold.status().message(), "PEERREDUCE_POOL_DEFRAG_THRESHOLD"));
  Config code;
  code.memory.pool_quota_bytes = code.memory.pool_bytes + 1;
  const Status status = code.validate();
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(status.message(), "PEERREDUCE_POOL_QUOTA_BYTES")) << status.message();
}

TEST(ConfigMemory, EveryPoolSettingChangesTheFingerprint) {
  // Ranks with different pools would place blocks at different offsets: creation must see it.
  const std::uint64_t base = Config{}.fingerprint();
  for (int field = 0; field < 5; ++field) {
    Config c;
    if (field == 0) c.memory.pool_bytes *= 2;
    if (field == 1) c.memory.pool_quota_bytes = kIpcGranularityBytes;
    if (field == 2) c.memory.pool_alignment_bytes *= 2;
    if (field == 3) c.memory.defrag_threshold = 0.75;
    if (field == 4) c.memory.pinned_limit_bytes *= 2;
    EXPECT_NE(c.fingerprint(), base) << "field " << field;
  }
}

}  // namespace
}  // namespace peerreduce
