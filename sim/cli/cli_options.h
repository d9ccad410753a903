// Command-line options of peerreduce-sim, parsed into a typed struct with typed errors.
// Separate from main() so the parser can be unit-tested and fuzzed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce::sim {

enum class CliCommand { kAllreduce, kPredict, kHelp };

struct CliOptions {
  CliCommand command = CliCommand::kAllreduce;
  // What runs (kAllreduce) or is predicted (kPredict): the command's name (allreduce, reduce-scatter,
  // all-gather, broadcast), or predict's --collective. --count is per rank's block: reduce-scatter's
  // recvcount, all-gather's sendcount.
  Collective collective = Collective::kAllReduce;
  int root = 0;            // broadcast's
  bool op_given = false;   // --op on the command line (the collectives without arithmetic refuse it)
  bool defaulted = false;  // no arguments at all: the default run
  int ranks = 8;
  std::size_t count = 1048576;
  DataType dtype = DataType::kBFloat16;
  ReduceOp op = ReduceOp::kSum;
  Algorithm algorithm = Algorithm::kAuto;
  std::uint64_t seed = 1;
  bool in_place = false;
  bool json = false;
  bool race_checking = true;
  int iterations = 1;
  std::string trace_path;  // empty: no trace
  std::string
      topology;        // generator name (full-mesh, ring, mesh2d:RxC, pcie:K, random:D[:S]) or a file; empty: full mesh
  std::string mask;    // link mask "A-B,C-D" (PEERREDUCE_LINK_MASK semantics)
  std::string device;  // calibrated profile (topology/device_profiles.h) pricing the full mesh; empty: defaults
  // Several simulated machines (multi_machine_command.h): machines > 0 runs or predicts across machines,
  // each machine of ranks_per_machine ranks priced as --topology / --device say, joined by `network`.
  int machines = 0;
  int ranks_per_machine = 0;
  std::string network;   // topology/machines.h parseNetworkSpec; empty: 400 Gb/s, 5 us
  std::string strategy;  // auto (default), hierarchical, flat
  // `plan run FILE` (plan_command.h): the plan file, run at every size beside every built-in algorithm.
  std::string plan_file;
};

// Largest --count: 2^32 elements, 32 GiB per rank of fp64, beyond what the host can simulate anyway.
inline constexpr std::size_t kMaxCliCount = std::size_t{1} << 32;
inline constexpr int kMaxCliIterations = 1000;  // bounded so a typo cannot make a run last for hours

StatusOr<CliOptions> parseCliOptions(const std::vector<std::string>& args);
std::string cliUsage();
// The command line that reproduces `options`.
std::string cliCommandLine(const CliOptions& options);

}  // namespace peerreduce::sim
