// Fuzzes the PEERREDUCE_* environment values: Config::fromEnvironment with an injected getenv, the
// byte-size and number parsers behind it, and the link mask applied to a world of 64 ranks.
// Input: lines "NAME=value"; a variable without a line is unset. Names are not listed here, so
// variables added to Config later are fuzzed as soon as a seed names them. Oracles: an accepted
// config passes validate(); an accepted mask leaves a topology of the same size with no added link (on a
// full mesh host-staged entries only change a link's class).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "fuzz_input.h"
#include "peerreduce/config.h"
#include "topology/generators.h"
#include "util/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace peerreduce;
  fuzz::FuzzInput input(data, size);
  std::map<std::string, std::string> environment;
  while (!input.empty()) {
    const std::string line = input.until('\n');
    const auto equals = line.find('=');
    if (equals == std::string::npos) continue;
    environment[line.substr(0, equals)] = line.substr(equals + 1);
  }
  const auto getenv = [&](const char* name) -> const char* {
    const auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
  };
  auto config = Config::fromEnvironment(Config{}, getenv);
  if (config.isOk()) {
    if (!config->validate().isOk()) fuzz::oracleFailed("an accepted configuration does not validate");
    (void)config->describe();
    (void)config->fingerprint();
    // The mask's ranks are checked against the world at creation: try the largest world.
    const Topology full = Topology::fullMesh(kMaxWorldSize);
    auto masked = applyLinkMask(full, config->link_mask);
    if (masked.isOk()) {
      if (masked->worldSize() != kMaxWorldSize) fuzz::oracleFailed("the mask changed the world size");
      for (int a = 0; a < kMaxWorldSize; ++a) {
        for (int b = 0; b < kMaxWorldSize; ++b) {
          if (masked->link(a, b).connected() && !full.link(a, b).connected())
            fuzz::oracleFailed("the mask added a link");
        }
      }
    }
  }
  // The parsers behind the settings, on each raw value.
  for (const auto& [name, value] : environment) {
    (void)parseByteSize(value);
    (void)parseInt64(value, -1000, 1000, "value");
    (void)parseDouble(value, "value");
    (void)parseAlgorithm(value);
  }
  return 0;
}
