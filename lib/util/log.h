// Logging: one line per event, with the rank, to stderr. Level from PEERREDUCE_DEBUG:
//   WARN (default) - problems a user should see; INFO - creation, selection, recovery; TRACE - every
//   operation and step (the only level allowed on the allreduce hot path).
// The variable is read at the first line logged (an unknown value warns once and keeps WARN); its row of
// the settings registry (lib/config/settings_registry.h) is logLevelSetting().
// PR_LOG tests the level before formatting, so a disabled level costs one load and a branch.
#pragma once

#include <atomic>

namespace peerreduce {

struct SettingSpec;

enum class LogLevel : int { kWarn = 0, kInfo = 1, kTrace = 2 };

namespace detail {
extern std::atomic<int> g_log_level;  // -1 until read from the environment
int initLogLevelFromEnvironment();
}  // namespace detail

inline LogLevel currentLogLevel() {
  int level = detail::g_log_level.load(std::memory_order_relaxed);
  if (level < 0) level = detail::initLogLevelFromEnvironment();
  return static_cast<LogLevel>(level);
}
inline bool logEnabled(LogLevel level) { return static_cast<int>(level) <= static_cast<int>(currentLogLevel()); }

// Overrides PEERREDUCE_DEBUG (tests and tools).
void setLogLevel(LogLevel level);
// Drops every line, warnings included: for tools that provoke thousands of failures on purpose (the
// fault campaign) and report them in their own summary.
void setLogMuted(bool muted);
const char* logLevelName(LogLevel level);
// PEERREDUCE_DEBUG as a setting: a choice whose values are the LogLevel numbers. Defined here, beside the
// only reader, because the logger sits below the settings registry that lists it.
const SettingSpec& logLevelSetting();

// rank < 0 means "no rank" (process-wide events).
void logLine(LogLevel level, int rank, const char* format, ...) __attribute__((format(printf, 3, 4)));

}  // namespace peerreduce

#define PR_LOG(level, rank, ...)                                                          \
  do {                                                                                    \
    if (::peerreduce::logEnabled(level)) ::peerreduce::logLine(level, rank, __VA_ARGS__); \
  } while (false)
#define PR_WARN(rank, ...) PR_LOG(::peerreduce::LogLevel::kWarn, rank, __VA_ARGS__)
#define PR_INFO(rank, ...) PR_LOG(::peerreduce::LogLevel::kInfo, rank, __VA_ARGS__)
#define PR_TRACE(rank, ...) PR_LOG(::peerreduce::LogLevel::kTrace, rank, __VA_ARGS__)
