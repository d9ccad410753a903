// Logging (util/log.h): the level decides what PR_LOG prints, lines carry level and rank, and
// PEERREDUCE_DEBUG picks the level when no one set it.
#include "util/log.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace peerreduce {
namespace {

// Restores the process-wide log level (and PEERREDUCE_DEBUG) after each test, so tests do not leak
// their level into one another when they share a process.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_level_ = detail::g_log_level.load();
    if (const char* env = std::getenv("PEERREDUCE_DEBUG")) saved_env_ = env;
  }
  void TearDown() override {
    detail::g_log_level.store(saved_level_);
    if (saved_env_) {
      ::setenv("PEERREDUCE_DEBUG", saved_env_->c_str(), 1);
    } else {
      ::unsetenv("PEERREDUCE_DEBUG");
    }
  }

  // Forgets the level, so the next query reads PEERREDUCE_DEBUG = `value` (nullopt: unset).
  static void resetFromEnvironment(std::optional<std::string> value) {
    if (value) {
      ::setenv("PEERREDUCE_DEBUG", value->c_str(), 1);
    } else {
      ::unsetenv("PEERREDUCE_DEBUG");
    }
    detail::g_log_level.store(-1);
  }

 private:
  int saved_level_ = -1;
  std::optional<std::string> saved_env_;
};

// Emits one line at each level and returns what reached stderr.
std::string logOneOfEach() {
  ::testing::internal::CaptureStderr();
  PR_WARN(1, "warn line %d", 1);
  PR_INFO(2, "info line %s", "two");
  PR_TRACE(-1, "trace line %d", 3);
  return ::testing::internal::GetCapturedStderr();
}

TEST_F(LogTest, WarnLevelPrintsOnlyWarnings) {
  setLogLevel(LogLevel::kWarn);
  EXPECT_EQ(currentLogLevel(), LogLevel::kWarn);
  EXPECT_TRUE(logEnabled(LogLevel::kWarn));
  EXPECT_FALSE(logEnabled(LogLevel::kInfo));
  EXPECT_EQ(logOneOfEach(), "peerreduce WARN rank 1: warn line 1\n");
}

TEST_F(LogTest, InfoLevelAddsInfoButNotTrace) {
  setLogLevel(LogLevel::kInfo);
  EXPECT_EQ(logOneOfEach(), "peerreduce WARN rank 1: warn line 1\npeerreduce INFO rank 2: info line two\n");
}

TEST_F(LogTest, TraceLevelPrintsEverythingAndOmitsANegativeRank) {
  setLogLevel(LogLevel::kTrace);
  EXPECT_EQ(logOneOfEach(),
            "peerreduce WARN rank 1: warn line 1\npeerreduce INFO rank 2: info line two\n"
            "peerreduce TRACE: trace line 3\n");
}

// The arguments of a disabled level are not evaluated: PR_LOG tests the level before formatting.
TEST_F(LogTest, DisabledLevelDoesNotEvaluateItsArguments) {
  setLogLevel(LogLevel::kWarn);
  int evaluated = 0;
  ::testing::internal::CaptureStderr();
  PR_TRACE(0, "%d", ++evaluated);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(evaluated, 0);
}

TEST_F(LogTest, LongMessagesAreTruncatedNotOverflowed) {
  setLogLevel(LogLevel::kWarn);
  const std::string long_text(5000, 'x');
  ::testing::internal::CaptureStderr();
  PR_WARN(0, "%s", long_text.c_str());
  const std::string line = ::testing::internal::GetCapturedStderr();
  EXPECT_LT(line.size(), 1100u);
  EXPECT_EQ(line.rfind("peerreduce WARN rank 0: xxx", 0), 0u) << line.substr(0, 40);
}

TEST_F(LogTest, LevelNames) {
  EXPECT_STREQ(logLevelName(LogLevel::kWarn), "WARN");
  EXPECT_STREQ(logLevelName(LogLevel::kInfo), "INFO");
  EXPECT_STREQ(logLevelName(LogLevel::kTrace), "TRACE");
  EXPECT_STREQ(logLevelName(static_cast<LogLevel>(7)), "?");
}

TEST_F(LogTest, EnvironmentSelectsTheLevelInEitherCase) {
  const struct {
    const char* value;
    LogLevel level;
  } cases[] = {{"WARN", LogLevel::kWarn}, {"warn", LogLevel::kWarn},   {"INFO", LogLevel::kInfo},
               {"info", LogLevel::kInfo}, {"TRACE", LogLevel::kTrace}, {"trace", LogLevel::kTrace},
               {"", LogLevel::kWarn}};
  for (const auto& c : cases) {
    resetFromEnvironment(c.value);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(currentLogLevel(), c.level) << c.value;
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << c.value;
  }
  resetFromEnvironment(std::nullopt);
  EXPECT_EQ(currentLogLevel(), LogLevel::kWarn);
}

TEST_F(LogTest, UnknownEnvironmentValueWarnsOnceAndFallsBackToWarn) {
  resetFromEnvironment("VERBOSE");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(currentLogLevel(), LogLevel::kWarn);
  EXPECT_EQ(currentLogLevel(), LogLevel::kWarn);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "peerreduce WARN: PEERREDUCE_DEBUG='VERBOSE' is not WARN, INFO or TRACE; using WARN\n");
}

// setLogLevel wins over the environment, whichever came first.
TEST_F(LogTest, SetLogLevelOverridesTheEnvironment) {
  resetFromEnvironment("TRACE");
  setLogLevel(LogLevel::kInfo);
  EXPECT_EQ(currentLogLevel(), LogLevel::kInfo);
  EXPECT_EQ(detail::initLogLevelFromEnvironment(), static_cast<int>(LogLevel::kInfo))
      << "a level already set must not be replaced by the environment";
}

}  // namespace
}  // namespace peerreduce
