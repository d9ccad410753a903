// The suites' one substring check: whether an error message, report or printed text mentions a word.
// A file's own copy would clash with the next file's where a suite compiles its files in batches.
#pragma once

#include <string>
#include <string_view>

namespace peerreduce::testing {

inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// Whether a status's (or anything with a message()) message mentions `words`.
template <class WithMessage>
bool mentions(const WithMessage& status, std::string_view words) {
  return contains(status.message(), words);
}

}  // namespace peerreduce::testing
