#include "util/log.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <variant>

#include "util/setting_spec.h"

namespace peerreduce {
namespace detail {

std::atomic<int> g_log_level{-1};

int initLogLevelFromEnvironment() {
  const SettingSpec& spec = logLevelSetting();
  const char* value = std::getenv(spec.name.c_str());
  auto parsed = readSetting(spec, [value](const char*) { return value; });
  int level = static_cast<int>(LogLevel::kWarn);
  if (parsed.isOk() && parsed->has_value()) level = static_cast<int>(std::get<std::int64_t>(**parsed));
  int expected = -1;
  if (g_log_level.compare_exchange_strong(expected, level) && !parsed.isOk()) {
    std::fprintf(stderr, "peerreduce WARN: %s='%s' is not %s, %s or %s; using %s\n", spec.name.c_str(), value,
                 logLevelName(LogLevel::kWarn), logLevelName(LogLevel::kInfo), logLevelName(LogLevel::kTrace),
                 logLevelName(LogLevel::kWarn));
  }
  return g_log_level.load();
}

}  // namespace detail

void setLogLevel(LogLevel level) { detail::g_log_level.store(static_cast<int>(level)); }

namespace {
std::atomic<bool> g_log_muted{false};
}  // namespace

void setLogMuted(bool muted) { g_log_muted.store(muted, std::memory_order_relaxed); }

const SettingSpec& logLevelSetting() {
  static const SettingSpec spec = [] {
    SettingSpec s;
    s.name = "PEERREDUCE_DEBUG";
    s.kind = SettingKind::kChoice;
    s.agreement = SettingAgreement::kLocal;
    s.noun = "log level";
    // The upper-case spellings come first: they are the canonical names.
    for (LogLevel level : {LogLevel::kWarn, LogLevel::kInfo, LogLevel::kTrace}) {
      s.choices.push_back({logLevelName(level), static_cast<int>(level)});
    }
    s.choices.push_back({"warn", static_cast<int>(LogLevel::kWarn)});
    s.choices.push_back({"info", static_cast<int>(LogLevel::kInfo)});
    s.choices.push_back({"trace", static_cast<int>(LogLevel::kTrace)});
    s.default_value = std::int64_t{static_cast<int>(LogLevel::kWarn)};
    s.example = "INFO";
    s.help =
        "logging to stderr: WARN problems, INFO also creation, selection and recovery, TRACE every operation; "
        "an unknown value warns and keeps WARN";
    return s;
  }();
  return spec;
}

const char* logLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kWarn:
      return "WARN";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kTrace:
      return "TRACE";
  }
  return "?";
}

void logLine(LogLevel level, int rank, const char* format, ...) {
  if (g_log_muted.load(std::memory_order_relaxed)) return;
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  // One fprintf per line, so lines from different ranks (threads) do not interleave mid-line.
  if (rank >= 0) {
    std::fprintf(stderr, "peerreduce %s rank %d: %s\n", logLevelName(level), rank, message);
  } else {
    std::fprintf(stderr, "peerreduce %s: %s\n", logLevelName(level), message);
  }
}

}  // namespace peerreduce
