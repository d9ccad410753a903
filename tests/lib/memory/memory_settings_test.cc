// MemorySettings: defaults, PEERREDUCE_* environment variables, and validation errors that name the
// variable, the value and what is accepted.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "peerreduce/memory.h"

namespace peerreduce::testing {
namespace {

StatusOr<MemorySettings> fromEnv(const std::map<std::string, std::string>& env,
                                 const MemorySettings& base = MemorySettings{}) {
  return MemorySettings::fromEnvironment(base, [&env](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

void expectInvalid(const std::map<std::string, std::string>& env, const std::string& words) {
  auto r = fromEnv(env);
  ASSERT_FALSE(r.isOk()) << "accepted " << env.begin()->first << "=" << env.begin()->second;
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status().toString();
}

TEST(MemorySettings, DefaultsAreValid) {
  const MemorySettings s;
  EXPECT_TRUE(s.validate().isOk());
  EXPECT_EQ(s.pool_bytes, kDefaultPoolBytes);
  EXPECT_EQ(s.pool_bytes % kIpcGranularityBytes, 0u);
  EXPECT_EQ(s.pool_quota_bytes, 0u);
  EXPECT_EQ(s.pool_alignment_bytes, kDefaultPoolAlignmentBytes);
  EXPECT_EQ(s.defrag_threshold, kDefaultDefragThreshold);
  EXPECT_EQ(s.pinned_limit_bytes, kDefaultPinnedLimitBytes);
  EXPECT_EQ(*fromEnv({}), s);
}

TEST(MemorySettings, EnvironmentOverridesCode) {
  MemorySettings base;
  base.pool_bytes = std::size_t{8} << 20;
  auto r = fromEnv({{"PEERREDUCE_POOL_BYTES", "128M"},
                    {"PEERREDUCE_POOL_QUOTA_BYTES", "96MiB"},
                    {"PEERREDUCE_POOL_ALIGNMENT", "4K"},
                    {"PEERREDUCE_POOL_DEFRAG_THRESHOLD", "0.75"},
                    {"PEERREDUCE_PINNED_LIMIT_BYTES", "1G"}},
                   base);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_EQ(r->pool_bytes, std::size_t{128} << 20);
  EXPECT_EQ(r->pool_quota_bytes, std::size_t{96} << 20);
  EXPECT_EQ(r->pool_alignment_bytes, 4096u);
  EXPECT_EQ(r->defrag_threshold, 0.75);
  EXPECT_EQ(r->pinned_limit_bytes, std::size_t{1} << 30);
  EXPECT_EQ(fromEnv({{"PEERREDUCE_POOL_DEFRAG_THRESHOLD", "1"}})->defrag_threshold, 1.0);
  EXPECT_EQ(fromEnv({{"PEERREDUCE_POOL_DEFRAG_THRESHOLD", ".25"}})->defrag_threshold, 0.25);
  EXPECT_EQ(fromEnv({{"PEERREDUCE_POOL_BYTES", ""}})->pool_bytes, kDefaultPoolBytes);  // empty = unset
  const std::string line = r->describe();
  EXPECT_NE(line.find("pool_bytes=134217728"), std::string::npos) << line;
  EXPECT_NE(line.find("pinned_limit_bytes=1073741824"), std::string::npos) << line;
}

TEST(MemorySettings, MalformedOrOutOfRangeValuesNameTheVariable) {
  expectInvalid({{"PEERREDUCE_POOL_BYTES", "lots"}}, "PEERREDUCE_POOL_BYTES");
  expectInvalid({{"PEERREDUCE_POOL_BYTES", "3M"}}, "PEERREDUCE_POOL_BYTES");  // not whole IPC granules
  expectInvalid({{"PEERREDUCE_POOL_BYTES", "3M"}}, "IPC allocation granularity");
  expectInvalid({{"PEERREDUCE_POOL_BYTES", "0"}}, "PEERREDUCE_POOL_BYTES");
  expectInvalid({{"PEERREDUCE_POOL_BYTES", "128G"}}, "137438953472");
  expectInvalid({{"PEERREDUCE_POOL_BYTES", "99999999999999999999999"}}, "overflows");
  expectInvalid({{"PEERREDUCE_POOL_QUOTA_BYTES", "129M"}}, "PEERREDUCE_POOL_QUOTA_BYTES");  // above the pool
  expectInvalid({{"PEERREDUCE_POOL_QUOTA_BYTES", "1X"}}, "PEERREDUCE_POOL_QUOTA_BYTES");
  expectInvalid({{"PEERREDUCE_POOL_ALIGNMENT", "24"}}, "PEERREDUCE_POOL_ALIGNMENT");
  expectInvalid({{"PEERREDUCE_POOL_ALIGNMENT", "8"}}, "alignment of 8 bytes");
  expectInvalid({{"PEERREDUCE_POOL_ALIGNMENT", "4M"}}, "PEERREDUCE_POOL_ALIGNMENT");
  expectInvalid({{"PEERREDUCE_POOL_DEFRAG_THRESHOLD", "1.5"}}, "PEERREDUCE_POOL_DEFRAG_THRESHOLD");
  expectInvalid({{"PEERREDUCE_POOL_DEFRAG_THRESHOLD", "-0.1"}}, "PEERREDUCE_POOL_DEFRAG_THRESHOLD='-0.1'");
  expectInvalid({{"PEERREDUCE_POOL_DEFRAG_THRESHOLD", "nan"}}, "is not a number in 0..1");
  expectInvalid({{"PEERREDUCE_POOL_DEFRAG_THRESHOLD", "."}}, "PEERREDUCE_POOL_DEFRAG_THRESHOLD");
  expectInvalid({{"PEERREDUCE_POOL_DEFRAG_THRESHOLD", "0.1.2"}}, "PEERREDUCE_POOL_DEFRAG_THRESHOLD");
  expectInvalid({{"PEERREDUCE_POOL_DEFRAG_THRESHOLD", "0.0000000000000000000001"}}, "is not a number");
  expectInvalid({{"PEERREDUCE_PINNED_LIMIT_BYTES", "1K"}}, "PEERREDUCE_PINNED_LIMIT_BYTES");
  expectInvalid({{"PEERREDUCE_PINNED_LIMIT_BYTES", "2048G"}}, "PEERREDUCE_PINNED_LIMIT_BYTES");
}

TEST(MemorySettings, ReadsTheProcessEnvironment) {
  ASSERT_EQ(::setenv("PEERREDUCE_POOL_ALIGNMENT", "24", 1), 0);
  auto r = MemorySettings::fromEnvironment(MemorySettings{});
  ::unsetenv("PEERREDUCE_POOL_ALIGNMENT");
  ASSERT_FALSE(r.isOk());
  EXPECT_NE(r.status().message().find("PEERREDUCE_POOL_ALIGNMENT"), std::string::npos) << r.status().toString();
}

TEST(MemorySettings, ValidateChecksValuesSetInCode) {
  MemorySettings s;
  s.defrag_threshold = -1.0;
  EXPECT_EQ(s.validate().code(), ErrorCode::kInvalidArgument);
  s = MemorySettings{};
  s.pool_quota_bytes = s.pool_bytes + 1;
  EXPECT_NE(s.validate().message().find("raise PEERREDUCE_POOL_BYTES"), std::string::npos);
}

}  // namespace
}  // namespace peerreduce::testing
