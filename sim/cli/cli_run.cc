// What every run command of peerreduce-sim shares: see cli_run.h.
#include "cli/cli_run.h"

#include <cinttypes>
#include <cstdio>
#include <string>
#include <string_view>

#include "topology/device_profiles.h"
#include "topology/generators.h"
#include "topology/routes.h"
#include "topology/topology_file.h"

namespace peerreduce::sim {

void fail(RunReport& report, const std::string& what) {
  if (report.verdict == "ok") report.verdict = what;
}

StatusOr<Topology> simulatedTopology(const CliOptions& o) {
  Topology topology = Topology::fullMesh(o.ranks);
  if (!o.device.empty()) {
    // parseCliOptions checked the name, and that no other topology was asked for.
    topology = profileFullMesh(*findDeviceProfile(o.device), o.ranks);
  } else if (!o.topology.empty()) {
    auto named = parseTopologySpec(o.topology, o.ranks);
    if (named.isOk()) {
      topology = *named;
    } else {
      auto from_file = loadTopologyFile(o.topology);
      if (!from_file.isOk()) {
        return invalidArgumentError("--topology " + o.topology + " is neither a known topology (" +
                                    named.status().message() + ") nor a readable topology file (" +
                                    from_file.status().message() + ")");
      }
      topology = *from_file;
      if (topology.worldSize() != o.ranks) {
        return invalidArgumentError("--topology " + o.topology + " describes " + std::to_string(topology.worldSize()) +
                                    " ranks but --ranks is " + std::to_string(o.ranks));
      }
    }
  }
  if (!o.mask.empty()) {
    // Host-staged pairs get the device profile's host-staged figures where it has them.
    const LinkInfo host_link = o.device.empty()
                                   ? defaultHostStagedLink()
                                   : hostStagedLinkFor(std::string(findDeviceProfile(o.device)->architecture));
    PR_ASSIGN_OR_RETURN(Topology masked, applyLinkMask(topology, o.mask, host_link));
    // A mask that cuts the world apart is bad input (exit 2), not a failure of the run.
    PR_RETURN_IF_ERROR(checkMaskKeepsConnected(topology, masked, o.mask, "--mask"));
    topology = std::move(masked);
  }
  return topology;
}

StatusOr<Config> cliConfig(const CliOptions& o) {
  PR_ASSIGN_OR_RETURN(Config config, Config::fromEnvironment());
  // --algo forces the command's collective only (an allreduce's algorithm is PEERREDUCE_ALGO, the others'
  // their own settings), so a reduce-scatter forced to a plan the allreduce lacks still creates its world.
  if (o.algorithm != Algorithm::kAuto) config.algorithmSettingOf(o.collective) = o.algorithm;
  if (!o.mask.empty()) config.link_mask = o.mask;
  if (!o.plan_file.empty()) {
    // `plan run`: the file runs at every size, so the run and every row of the table show it.
    config.plan_file = o.plan_file;
    config.plan_min_bytes = 0;
    config.plan_max_bytes = 0;
  }
  return config;
}

Status forcedAlgorithmContext(const CliOptions& o, const Status& status) {
  // "unset PEERREDUCE_ALGO or pick another", or a collective's own setting (PEERREDUCE_ALGO_BROADCAST).
  constexpr std::string_view kHintStart = "unset PEERREDUCE_ALGO";
  constexpr std::string_view kHintEnd = " or pick another";
  const std::size_t at = status.message().find(kHintStart);
  const std::size_t end = at == std::string::npos ? at : status.message().find(kHintEnd, at);
  if (o.algorithm == Algorithm::kAuto || end == std::string::npos) return status;
  std::string message = status.message();
  message.replace(at, end + kHintEnd.size() - at, "pick another --algo, or --algo auto");
  return Status(status.code(), "--algo " + std::string(algorithmName(o.algorithm)) + ": " + message);
}

StatusOr<std::unique_ptr<SimCluster>> createRunCluster(RunReport& report) {
  const CliOptions& o = report.options;
  SimOptions sim_options;
  sim_options.seed = o.seed;
  sim_options.race_checking = o.race_checking;
  sim_options.record_trace = !o.trace_path.empty();
  PR_ASSIGN_OR_RETURN(sim_options.topology, simulatedTopology(o));
  PR_ASSIGN_OR_RETURN(Config config, cliConfig(o));
  auto created = SimCluster::create(o.ranks, sim_options, config);
  if (!created.isOk()) return forcedAlgorithmContext(o, created.status());
  auto cluster = std::move(created).value();
  report.topology = cluster->comm(0).topology().describe();
  auto selection = cluster->comm(0).explainSelection(o.collective, o.count, o.dtype, o.root);
  if (!selection.isOk()) return forcedAlgorithmContext(o, selection.status());
  report.selection = std::move(selection).value();
  report.plan_description =
      report.selection.plan.empty() ? std::string(algorithmName(report.selection.chosen)) : report.selection.plan;
  // An operation on nothing submits nothing (it returns at once): no time to predict.
  for (const auto& c : o.count == 0 ? std::vector<AlgorithmEstimate>{} : report.selection.candidates) {
    // The chosen variant (several candidates may share an algorithm: trees of different pipelines).
    if (c.algorithm == report.selection.chosen && c.plan == report.selection.plan) {
      report.predicted_us = c.predicted_us;
      break;
    }
  }
  return cluster;
}

Status collectRunStats(SimCluster& cluster, RunReport& report) {
  const CliOptions& o = report.options;
  report.stats = cluster.world().stats();
  // The pools are symmetric: every rank made the same calls, so every rank's statistics are the same.
  report.memory = cluster.comm(0).memoryStats();
  for (int r = 1; r < o.ranks; ++r) {
    if (!(cluster.comm(r).memoryStats() == report.memory)) {
      fail(report, "rank " + std::to_string(r) + "'s symmetric pool differs from rank 0's: " +
                       describe(cluster.comm(r).memoryStats()) + " vs " + describe(report.memory));
    }
  }
  report.pinned = cluster.comm(0).pinnedStats();
  report.races = cluster.world().raceReports();
  report.fingerprint = cluster.world().traceFingerprint();
  if (!o.trace_path.empty()) {
    PR_RETURN_IF_ERROR(cluster.world().writeChromeTrace(o.trace_path));
    const std::uint64_t dropped = cluster.world().stats().trace_events_dropped;
    if (dropped > 0) {
      // The run itself is complete and verified; only the file is cut (its metadata says so too).
      std::fprintf(stderr,
                   "peerreduce-sim: the trace %s holds the first 1000000 events; %" PRIu64
                   " later ones were left out (see otherData.events_dropped); trace fewer iterations or "
                   "ranks to see them all\n",
                   o.trace_path.c_str(), dropped);
    }
  }
  return Status::ok();
}

bool guardsBroken(const std::vector<unsigned char>& buffer) {
  if (buffer.empty()) return false;
  for (std::size_t g = 0; g < kGuardBytes; ++g) {
    if (buffer[g] != kGuardByte || buffer[buffer.size() - 1 - g] != kGuardByte) return true;
  }
  return false;
}

}  // namespace peerreduce::sim
