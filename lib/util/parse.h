// Strict parsing of numbers and lists from untrusted text (environment variables, files, command
// lines): whole-string matches only, range and overflow checks, errors naming what was parsed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "peerreduce/status.h"

namespace peerreduce {

// Splits on `separator`; an empty input gives one empty field. Bounded by the input's length.
std::vector<std::string> splitString(std::string_view text, char separator);
// Splits on runs of spaces and tabs, dropping empty fields.
std::vector<std::string> splitWords(std::string_view text);

// The words of every line of `text` that has any, with the line's number (from 1): '#' starts a comment to
// the end of its line, and blank lines are left out. For line-oriented files (tuning and take tables).
struct LineWords {
  int line = 0;
  std::vector<std::string> words;
};
std::vector<LineWords> wordsByLine(std::string_view text);

// A decimal integer (optional leading '-') in [low, high]; `what` names it in errors.
StatusOr<std::int64_t> parseInt64(std::string_view text, std::int64_t low, std::int64_t high, const char* what);
// A finite decimal number ("1", "0.5", "1e3"); NaN, infinities and trailing junk are rejected.
StatusOr<double> parseDouble(std::string_view text, const char* what);

// A byte size: "1048576", "64K", "32M", "32MiB", "1G" (powers of 1024), with overflow checks. The
// public peerreduce/config.h declares the same function for applications.
StatusOr<std::size_t> parseByteSize(const std::string& text);

}  // namespace peerreduce
