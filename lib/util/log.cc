#include "util/log.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace peerreduce {
namespace detail {

std::atomic<int> g_log_level{-1};

int initLogLevelFromEnvironment() {
  const char* value = std::getenv("PEERREDUCE_DEBUG");
  int level = static_cast<int>(LogLevel::kWarn);
  bool unknown = false;
  if (value != nullptr && *value != '\0') {
    if (std::strcmp(value, "WARN") == 0 || std::strcmp(value, "warn") == 0) {
      level = static_cast<int>(LogLevel::kWarn);
    } else if (std::strcmp(value, "INFO") == 0 || std::strcmp(value, "info") == 0) {
      level = static_cast<int>(LogLevel::kInfo);
    } else if (std::strcmp(value, "TRACE") == 0 || std::strcmp(value, "trace") == 0) {
      level = static_cast<int>(LogLevel::kTrace);
    } else {
      unknown = true;
    }
  }
  int expected = -1;
  if (g_log_level.compare_exchange_strong(expected, level) && unknown) {
    std::fprintf(stderr, "peerreduce WARN: PEERREDUCE_DEBUG='%s' is not WARN, INFO or TRACE; using WARN\n", value);
  }
  return g_log_level.load();
}

}  // namespace detail

void setLogLevel(LogLevel level) { detail::g_log_level.store(static_cast<int>(level)); }

namespace {
std::atomic<bool> g_log_muted{false};
}  // namespace

void setLogMuted(bool muted) { g_log_muted.store(muted, std::memory_order_relaxed); }

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
