#include <cstdio>
#include <cstdlib>

#include "fuzz_input.h"

namespace peerreduce::fuzz {

void report(std::string_view what) {
  static const bool verbose = std::getenv("PEERREDUCE_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "fuzz: %.*s\n", static_cast<int>(what.size()), what.data());
}

void oracleFailed(std::string_view what) {
  std::fprintf(stderr, "fuzz oracle failed: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

}  // namespace peerreduce::fuzz
