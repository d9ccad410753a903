#include "util/parse.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace peerreduce {
namespace {
// Longest number text accepted: more digits than any double or int64 needs, so a huge input is
// rejected before it is copied.
constexpr std::size_t kMaxNumberChars = 64;
}  // namespace

std::vector<std::string> splitString(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == separator) {
      out.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::vector<std::string> splitWords(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\t') ++i;
    if (i > start) out.emplace_back(text.substr(start, i - start));
  }
  return out;
}

StatusOr<std::int64_t> parseInt64(std::string_view text, std::int64_t low, std::int64_t high, const char* what) {
  const std::string shown(text.substr(0, kMaxNumberChars));
  if (text.empty()) return invalidArgumentError(std::string(what) + " is empty");
  bool negative = false;
  std::size_t i = 0;
  if (text[0] == '-') {
    negative = true;
    i = 1;
  }
  if (i == text.size()) return invalidArgumentError(std::string(what) + " '" + shown + "' is not a number");
  // Accumulate as a negative number so INT64_MIN parses without overflow.
  std::int64_t value = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') {
      return invalidArgumentError(std::string(what) + " '" + shown + "' is not a whole number");
    }
    const int digit = c - '0';
    if (value < (std::numeric_limits<std::int64_t>::min() + digit) / 10) {
      return invalidArgumentError(std::string(what) + " '" + shown + "' is out of range");
    }
    value = value * 10 - digit;
  }
  if (!negative) {
    if (value == std::numeric_limits<std::int64_t>::min()) {
      return invalidArgumentError(std::string(what) + " '" + shown + "' is out of range");
    }
    value = -value;
  }
  if (value < low || value > high) {
    return invalidArgumentError(std::string(what) + " " + shown + " is outside " + std::to_string(low) + ".." +
                                std::to_string(high));
  }
  return value;
}

StatusOr<double> parseDouble(std::string_view text, const char* what) {
  if (text.empty() || text.size() > kMaxNumberChars) {
    return invalidArgumentError(std::string(what) + " '" + std::string(text.substr(0, kMaxNumberChars)) +
                                "' is not a number");
  }
  const std::string copy(text);
  for (char c : copy) {
    const bool allowed = (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E';
    if (!allowed) return invalidArgumentError(std::string(what) + " '" + copy + "' is not a decimal number");
  }
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || errno == ERANGE || !std::isfinite(value)) {
    return invalidArgumentError(std::string(what) + " '" + copy + "' is not a finite decimal number");
  }
  return value;
}

}  // namespace peerreduce
