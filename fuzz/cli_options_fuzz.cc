// Fuzzes peerreduce-sim's command-line parser. Input: the arguments separated by '\n'. Oracles: an
// accepted command line stays inside the documented limits, and the command line that reproduces it
// (cliCommandLine) parses to the same options.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli_options.h"
#include "fuzz_input.h"
#include "util/parse.h"

namespace {

using namespace peerreduce;
using sim::CliOptions;

bool sameRun(const CliOptions& a, const CliOptions& b) {
  return a.ranks == b.ranks && a.count == b.count && a.dtype == b.dtype && a.op == b.op && a.algorithm == b.algorithm &&
         a.seed == b.seed && a.in_place == b.in_place && a.race_checking == b.race_checking &&
         a.iterations == b.iterations && a.machines == b.machines && a.ranks_per_machine == b.ranks_per_machine &&
         a.network == b.network && a.strategy == b.strategy;
}

// cliCommandLine does not quote: a topology or mask with spaces or tabs does not survive the split
// below, so the round trip is only checked for plain words.
bool plainWord(const std::string& value) { return value.find_first_of(" \t") == std::string::npos; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::FuzzInput input(data, size);
  std::vector<std::string> args;
  constexpr std::size_t kMaxArgs = 64;  // more only repeats flags
  while (!input.empty() && args.size() < kMaxArgs) args.push_back(input.until('\n'));
  auto options = sim::parseCliOptions(args);
  if (!options.isOk() || options->command == sim::CliCommand::kHelp) return 0;
  if (options->ranks < 1 || options->ranks > kMaxWorldSize) fuzz::oracleFailed("accepted --ranks out of 1..64");
  if (options->count > sim::kMaxCliCount) fuzz::oracleFailed("accepted --count above the limit");
  if (options->iterations < 1 || options->iterations > sim::kMaxCliIterations) {
    fuzz::oracleFailed("accepted --iterations out of range");
  }
  if (!plainWord(options->topology) || !plainWord(options->mask)) return 0;
  const std::string line = sim::cliCommandLine(*options);
  auto words = splitWords(line);
  if (words.empty()) fuzz::oracleFailed("the reproducing command line is empty");
  words.erase(words.begin());  // the program name
  auto again = sim::parseCliOptions(words);
  if (!again.isOk())
    fuzz::oracleFailed("the reproducing command line is rejected: " + again.status().toString() + ": " + line);
  if (!sameRun(*options, *again)) fuzz::oracleFailed("the reproducing command line describes another run: " + line);
  return 0;
}
