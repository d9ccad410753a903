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

std::vector<LineWords> wordsByLine(std::string_view text) {
  std::vector<LineWords> out;
  const auto lines = splitString(text, '\n');
  for (std::size_t i = 0; i < lines.size(); ++i) {  // bounded by the text's size
    std::string_view content = lines[i];
    if (const auto hash = content.find('#'); hash != std::string_view::npos) content = content.substr(0, hash);
    auto words = splitWords(content);
    if (!words.empty()) out.push_back(LineWords{static_cast<int>(i) + 1, std::move(words)});
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

StatusOr<std::size_t> parseByteSize(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return invalidArgumentError("byte size '" + text + "' does not start with a number");
  const std::string suffix = text.substr(digits);
  int shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else if (suffix == "K" || suffix == "KiB" || suffix == "k") {
    shift = 10;
  } else if (suffix == "M" || suffix == "MiB") {
    shift = 20;
  } else if (suffix == "G" || suffix == "GiB") {
    shift = 30;
  } else {
    return invalidArgumentError("byte size '" + text + "' has unknown suffix '" + suffix +
                                "'; use none, K, M, G, KiB, MiB or GiB");
  }
  std::size_t value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const std::size_t digit = static_cast<std::size_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::size_t>::max() - digit) / 10) {
      return invalidArgumentError("byte size '" + text + "' overflows");
    }
    value = value * 10 + digit;
  }
  if (shift > 0 && value > (std::numeric_limits<std::size_t>::max() >> shift)) {
    return invalidArgumentError("byte size '" + text + "' overflows");
  }
  return value << shift;
}

}  // namespace peerreduce
