// The fault campaign across machines: see multi_machine_campaign.h.
#include "multi_machine_campaign.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "multi_machine_cluster.h"
#include "prng.h"
#include "rank_threads.h"
#include "util/parse.h"

namespace peerreduce::sim::campaign {

const char* machineFaultName(MachineFault fault) {
  switch (fault) {
    case MachineFault::kNone:
      return "none";
    case MachineFault::kNetworkLinkDown:
      return "network-link-down";
    case MachineFault::kMachineLost:
      return "machine-lost";
    case MachineFault::kNetworkDelay:
      return "network-delay";
    case MachineFault::kNetworkStall:
      return "network-stall";
  }
  return "invalid";
}

namespace {

Collective collectiveOf(int drawn) {
  return drawn == 1 ? Collective::kReduceScatter : drawn == 2 ? Collective::kAllGather : Collective::kAllReduce;
}

}  // namespace

std::string MachineScenario::describe() const {
  return std::to_string(machines) + " machines x " + std::to_string(ranks_per_machine) + " ranks, " +
         std::string(collectiveName(collectiveOf(collective))) + " of " + std::to_string(count) + " x int32 sum, " +
         machineStrategyName(static_cast<MachineStrategy>(strategy)) + ", fault " + machineFaultName(fault) +
         " (network world " + std::to_string(group) + ", machines " + std::to_string(machine_a) + " and " +
         std::to_string(machine_b) + ")";
}

MachineScenario drawMachineScenario(std::uint64_t seed) {
  Prng prng(deriveSeed(seed, 0x6d6d));
  MachineScenario s;
  s.seed = seed;
  s.machines = static_cast<int>(prng.between(2, 4));
  s.ranks_per_machine = static_cast<int>(prng.between(1, 3));
  s.count = static_cast<std::size_t>(prng.between(1, 3000));
  s.strategy = static_cast<int>(prng.below(3));
  s.fault = static_cast<MachineFault>(prng.below(kMachineFaultCount));
  s.group = static_cast<int>(prng.below(static_cast<std::uint64_t>(s.ranks_per_machine)));
  s.machine_a = static_cast<int>(prng.below(static_cast<std::uint64_t>(s.machines)));
  s.machine_b =
      (s.machine_a + 1 + static_cast<int>(prng.below(static_cast<std::uint64_t>(s.machines - 1)))) % s.machines;
  s.collective = static_cast<int>(prng.below(3));  // drawn last: the earlier draws of a seed stay what they were
  return s;
}

namespace {

// Every rank's input is exact in int32 and its sum too, so a result is checked without a reference.
std::int32_t inputOf(int rank, std::size_t i) { return static_cast<std::int32_t>(rank * 7 + static_cast<int>(i % 13)); }

struct Run {
  std::vector<Status> statuses;
  std::string wrong;  // "" when every ok rank holds the exact sum
};

// What rank r holds at element i after the collective: every input is exact in int32, and so is every sum.
std::int64_t expectedAt(Collective collective, int n, std::size_t count, int r, std::size_t i) {
  if (collective == Collective::kAllGather) return inputOf(static_cast<int>(i / count), i % count);
  const std::size_t at = collective == Collective::kReduceScatter ? static_cast<std::size_t>(r) * count + i : i;
  std::int64_t sum = 0;
  for (int q = 0; q < n; ++q) sum += inputOf(q, at);
  return sum;
}

// One collective of `count` per rank on every rank, checked element by element on the ranks that ended ok.
Run runOnce(MultiMachineSimCluster& cluster, Collective collective, std::size_t count, MachineStrategy strategy) {
  const int n = cluster.size();
  const auto world = static_cast<std::size_t>(n);
  const std::size_t in_count = collective == Collective::kReduceScatter ? world * count : count;
  const std::size_t out_count = collective == Collective::kAllGather ? world * count : count;
  std::vector<std::vector<std::int32_t>> in(world, std::vector<std::int32_t>(in_count));
  std::vector<std::vector<std::int32_t>> out(world, std::vector<std::int32_t>(out_count, -1));
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < in_count; ++i) in[static_cast<std::size_t>(r)][i] = inputOf(r, i);
  }
  Run run;
  run.statuses = cluster.run([&](MultiMachineCommunicator& comm, int r) {
    const auto x = static_cast<std::size_t>(r);
    switch (collective) {
      case Collective::kReduceScatter:
        return comm.reduceScatter(in[x].data(), out[x].data(), count, DataType::kInt32, ReduceOp::kSum, nullptr,
                                  strategy);
      case Collective::kAllGather:
        return comm.allGather(in[x].data(), out[x].data(), count, DataType::kInt32, nullptr, strategy);
      default:
        return comm.allreduce(in[x].data(), out[x].data(), count, DataType::kInt32, ReduceOp::kSum, nullptr, strategy);
    }
  });
  for (int r = 0; r < n && run.wrong.empty(); ++r) {
    if (!run.statuses[static_cast<std::size_t>(r)].isOk()) continue;
    for (std::size_t i = 0; i < out_count && run.wrong.empty(); ++i) {
      const std::int64_t expected = expectedAt(collective, n, count, r, i);
      if (out[static_cast<std::size_t>(r)][i] != expected) {
        run.wrong = "rank " + std::to_string(r) + " element " + std::to_string(i) + " is " +
                    std::to_string(out[static_cast<std::size_t>(r)][i]) + ", expected " + std::to_string(expected);
      }
    }
  }
  return run;
}

Config campaignConfig() {
  Config config;
  config.scratch_bytes = std::size_t{1} << 20;
  config.memory.pool_bytes = std::size_t{4} << 20;
  config.timeout = std::chrono::milliseconds(10000);
  return config;
}

void inject(MultiMachineSimWorld& world, const MachineScenario& s) {
  SimFaults& network = world.networkWorld(s.group).faults();
  switch (s.fault) {
    case MachineFault::kNone:
      break;
    case MachineFault::kNetworkLinkDown:
      network.setLinkDown(s.machine_a, s.machine_b, true);
      network.setLinkDown(s.machine_b, s.machine_a, true);
      break;
    case MachineFault::kMachineLost:
      for (int i = 0; i < world.ranksPerMachine(); ++i) world.networkWorld(i).faults().haltRank(s.machine_a, 0);
      break;
    case MachineFault::kNetworkDelay:
      network.setSignalDelay(s.machine_a, s.machine_b, 500.0);
      break;
    case MachineFault::kNetworkStall:
      network.stallRank(s.machine_a, 2000.0);
      break;
  }
}

// After a failure: every rank of a connected group decides the same failed set, and the machines the
// largest group keeps whole go on.
std::string recover(MultiMachineSimCluster& cluster, const MachineScenario& s, MachineCampaignReport& report) {
  const int n = cluster.size();
  std::vector<FailureDecision> decided(static_cast<std::size_t>(n));
  std::vector<Status> errors(static_cast<std::size_t>(n));
  runOnRankThreads(n, [&](int r) {
    MultiMachineCommunicator& comm = cluster.comm(r);
    auto d = agreeOnFailures(*cluster.world().worldBootstrap(r), agreementTopology(comm.layout()), comm.failureReport(),
                             std::chrono::milliseconds(10000));
    if (d.isOk()) {
      decided[static_cast<std::size_t>(r)] = *d;
    } else {
      errors[static_cast<std::size_t>(r)] = d.status();
    }
  });
  for (int r = 0; r < n; ++r) {
    if (!errors[static_cast<std::size_t>(r)].isOk()) {
      return "safety: agreement failed on rank " + std::to_string(r) + ": " +
             errors[static_cast<std::size_t>(r)].toString();
    }
    // A dead link can cut the world (two machines of one rank each): each connected group decides alike.
    if (!decisionsAgree(decided, r)) {
      return "safety: rank " + std::to_string(r) + "'s decision differs from its group's";
    }
  }
  const FailureDecision* going_on = largestGroup(decided);
  if (going_on == nullptr) return "safety: no rank's decision keeps itself";
  auto shrink = planMachineShrink(cluster.comm(0).layout(), *going_on);
  if (!shrink.isOk()) return "";  // nothing whole is left: a refusal, typed, is the right end
  if (s.fault == MachineFault::kMachineLost &&
      std::find(shrink->machines.begin(), shrink->machines.end(), s.machine_a) != shrink->machines.end()) {
    return "safety: the lost machine " + std::to_string(s.machine_a) + " was kept";
  }
  MultiMachineSimOptions rest;
  rest.machines = static_cast<int>(shrink->machines.size());
  rest.ranks_per_machine = s.ranks_per_machine;
  rest.seed = s.seed;
  auto survivors = MultiMachineSimCluster::create(rest, campaignConfig());
  if (!survivors.isOk()) return "liveness: the survivors' world: " + survivors.status().toString();
  const Run again = runOnce(**survivors, collectiveOf(s.collective), s.count, static_cast<MachineStrategy>(s.strategy));
  for (const Status& st : again.statuses) {
    if (!st.isOk()) return "liveness: after shrinking: " + st.toString();
  }
  if (!again.wrong.empty()) return "safety: after shrinking: " + again.wrong;
  ++report.shrinks;
  return "";
}

}  // namespace

std::string runMachineScenario(const MachineScenario& s, MachineCampaignReport& report) {
  MultiMachineSimOptions options;
  options.machines = s.machines;
  options.ranks_per_machine = s.ranks_per_machine;
  options.seed = s.seed;
  options.wait_timeout_us = 1e5;  // virtual: a peer that stopped is noticed after 100 ms of waiting
  auto created = MultiMachineSimCluster::create(options, campaignConfig());
  if (!created.isOk()) return "liveness: creation: " + created.status().toString();
  MultiMachineSimCluster& cluster = **created;
  inject(cluster.world(), s);
  const Run run = runOnce(cluster, collectiveOf(s.collective), s.count, static_cast<MachineStrategy>(s.strategy));
  if (!run.wrong.empty()) return "safety: " + run.wrong;
  int failed = 0;
  bool named = false;
  for (int r = 0; r < cluster.size(); ++r) {
    const Status& st = run.statuses[static_cast<std::size_t>(r)];
    if (st.isOk()) continue;
    ++failed;
    if (st.code() == ErrorCode::kInternal) return "safety: rank " + std::to_string(r) + ": " + st.toString();
    named = named || st.message().find("machine '") != std::string::npos;
  }
  const bool slows_only = s.fault == MachineFault::kNone || s.fault == MachineFault::kNetworkDelay ||
                          s.fault == MachineFault::kNetworkStall;
  if (failed == 0) {
    ++report.ops_ok;
    if (!slows_only) return "safety: every rank succeeded despite " + std::string(machineFaultName(s.fault));
    return "";
  }
  ++report.ops_failed;
  if (slows_only) return "liveness: " + std::to_string(failed) + " ranks failed under " + machineFaultName(s.fault);
  // Every rank fails, except the lost machine's own (gone in a real world; here they may end either way).
  for (int r = 0; r < cluster.size(); ++r) {
    const bool lost = s.fault == MachineFault::kMachineLost && cluster.world().machineOf(r) == s.machine_a;
    if (!lost && run.statuses[static_cast<std::size_t>(r)].isOk()) {
      return "safety: rank " + std::to_string(r) + " succeeded while others failed";
    }
  }
  if (!named) return "safety: no rank's error names a machine";
  return recover(cluster, s, report);
}

MachineCampaignReport runMachineCampaign(std::uint64_t first_seed, std::uint64_t seeds) {
  MachineCampaignReport report;
  for (std::uint64_t seed = first_seed; seed < first_seed + seeds; ++seed) {
    const MachineScenario s = drawMachineScenario(seed);
    ++report.scenarios;
    ++report.by_fault[static_cast<std::size_t>(s.fault)];
    ++report.by_collective[static_cast<std::size_t>(s.collective)];
    const std::string problem = runMachineScenario(s, report);
    if (problem.empty()) continue;
    (problem.rfind("liveness", 0) == 0 ? report.liveness_failures : report.safety_failures) += 1;
    if (report.failures.size() < 20) {
      report.failures.push_back("seed " + std::to_string(seed) + ": " + problem + " (" + s.describe() +
                                "; replay: peerreduce-sim campaign machines --seed " + std::to_string(seed) +
                                " --seeds 1)");
    }
  }
  return report;
}

int machineCampaignMain(const std::vector<std::string>& args) {
  std::uint64_t first = 1;
  std::uint64_t seeds = 20;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool count = args[i] == "--seeds";
    if ((count || args[i] == "--seed") && i + 1 < args.size()) {
      auto n = parseInt64(args[++i], count ? 1 : 0, count ? 100000 : std::numeric_limits<std::int64_t>::max(),
                          count ? "--seeds" : "--seed");
      if (!n.isOk()) {
        std::fprintf(stderr, "peerreduce-sim campaign machines: %s\n", n.status().toString().c_str());
        return 2;
      }
      (count ? seeds : first) = static_cast<std::uint64_t>(*n);
    } else {
      std::fprintf(stderr,
                   "peerreduce-sim campaign machines: unknown option or missing value '%s'\n"
                   "usage: peerreduce-sim campaign machines [--seeds N (1..100000, default 20)] [--seed S]\n",
                   args[i].c_str());
      return 2;
    }
  }
  const MachineCampaignReport r = runMachineCampaign(first, seeds);
  std::printf(
      "multi-machine campaign: %llu scenarios (seeds %llu..%llu), %llu ok, %llu failed as they should, %llu "
      "shrinks; safety failures %llu, liveness failures %llu\n",
      static_cast<unsigned long long>(r.scenarios), static_cast<unsigned long long>(first),
      static_cast<unsigned long long>(first + seeds - 1), static_cast<unsigned long long>(r.ops_ok),
      static_cast<unsigned long long>(r.ops_failed), static_cast<unsigned long long>(r.shrinks),
      static_cast<unsigned long long>(r.safety_failures), static_cast<unsigned long long>(r.liveness_failures));
  for (int f = 0; f < kMachineFaultCount; ++f) {
    std::printf("  %-18s %llu\n", machineFaultName(static_cast<MachineFault>(f)),
                static_cast<unsigned long long>(r.by_fault[static_cast<std::size_t>(f)]));
  }
  for (int c = 0; c < 3; ++c) {
    std::printf("  %-18s %llu\n", std::string(collectiveName(collectiveOf(c))).c_str(),
                static_cast<unsigned long long>(r.by_collective[static_cast<std::size_t>(c)]));
  }
  for (const std::string& failure : r.failures) std::printf("FAIL %s\n", failure.c_str());
  return r.safety_failures + r.liveness_failures == 0 ? 0 : 1;
}

}  // namespace peerreduce::sim::campaign
