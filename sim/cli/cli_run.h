// One run of peerreduce-sim: what it reports (RunReport) and what every run command shares: the
// simulated machine the options name, the library settings, and the statistics read after the run.
// main.cc runs the allreduce; collective_run.cc reduce-scatter, all-gather and broadcast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli_options.h"
#include "peerreduce/communicator.h"
#include "sim_cluster.h"

namespace peerreduce::sim {

// Guard bytes around every buffer: an operation that writes outside its buffer changes them.
inline constexpr std::size_t kGuardBytes = 64;
inline constexpr unsigned char kGuardByte = 0xA5;

struct RunReport {
  CliOptions options;
  std::string verdict = "ok";
  SelectionReport selection;
  std::string plan_description;
  double predicted_us = 0.0;
  SimStats stats;
  std::vector<std::string> races;
  std::uint64_t fingerprint = 0;
  std::string topology;
  bool ranks_agree = true;
  std::string reference_problem;
  PoolStats memory;    // rank 0's symmetric pool after the run (every rank's must be identical)
  PinnedStats pinned;  // rank 0's pinned host pool (per rank, not symmetric: host-staged paths only)
};

// Records the first thing that went wrong as the verdict.
void fail(RunReport& report, const std::string& what);

// The simulated machine's links: a generator name or a topology file, with the mask's links removed
// (the simulator itself then refuses any step over them, not only the planner).
StatusOr<Topology> simulatedTopology(const CliOptions& o);

// The environment's settings with the command line's --algo and --mask on top.
StatusOr<Config> cliConfig(const CliOptions& o);

// The library names the setting a forced algorithm comes from in general terms; here the user chose it
// with --algo, so the message says that.
Status forcedAlgorithmContext(const CliOptions& o, const Status& status);

// The world the options describe, with the selection of the run's collective explained into `report`
// (topology, selection, predicted time of the chosen plan).
StatusOr<std::unique_ptr<SimCluster>> createRunCluster(RunReport& report);

// After the run: statistics, the pools (every rank's symmetric pool must equal rank 0's), races (the
// caller's verdict checks them last), the trace fingerprint, the trace file if asked for.
Status collectRunStats(SimCluster& cluster, RunReport& report);

// Whether a guard band of `buffer` (kGuardBytes at each end) was overwritten.
bool guardsBroken(const std::vector<unsigned char>& buffer);

// reduce-scatter, all-gather or broadcast (options.collective): run, checked against the reference.
Status runCollective(RunReport& report);

// Exit statuses of every command: verified, the result or the run was wrong, bad input.
inline constexpr int kExitOk = 0;
inline constexpr int kExitWrong = 1;
inline constexpr int kExitBadInput = 2;

// main.cc: the run the options describe with its report (text or JSON) and exit status, and predict's table
// of every candidate's predicted time at 4 KiB .. 256 MiB.
int runAndReport(const CliOptions& options);
Status runPredict(const CliOptions& options);

}  // namespace peerreduce::sim
