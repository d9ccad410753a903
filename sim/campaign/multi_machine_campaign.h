// The fault campaign across machines (`peerreduce-sim campaign machines`): seeded scenarios of a
// simulated multi-machine world (peerreduce/multi_machine_sim.h) running one drawn collective (allreduce,
// reduce-scatter or all-gather) with one drawn fault between machines, each checked for safety (an
// operation that ends ok on every rank is exact everywhere; one
// that fails, fails on every rank with a typed error, naming the machines for a fault between them) and
// liveness (faults that only slow the network let every rank finish), then for recovery (every rank
// decides the same failed set, and the machines left whole run the collective again).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace peerreduce::sim::campaign {

enum class MachineFault { kNone, kNetworkLinkDown, kMachineLost, kNetworkDelay, kNetworkStall };
inline constexpr int kMachineFaultCount = 5;
const char* machineFaultName(MachineFault fault);

struct MachineScenario {
  std::uint64_t seed = 0;
  int machines = 2;
  int ranks_per_machine = 1;
  std::size_t count = 1;
  int strategy = 0;    // MachineStrategy
  int collective = 0;  // 0 allreduce, 1 reduce-scatter, 2 all-gather (count per rank)
  MachineFault fault = MachineFault::kNone;
  int group = 0;      // the network world (local rank) the fault is in
  int machine_a = 0;  // the machine lost, or one end of the link
  int machine_b = 0;  // the other end
  std::string describe() const;
};
MachineScenario drawMachineScenario(std::uint64_t seed);

struct MachineCampaignReport {
  std::uint64_t scenarios = 0;
  std::uint64_t safety_failures = 0;
  std::uint64_t liveness_failures = 0;
  std::uint64_t ops_ok = 0, ops_failed = 0, shrinks = 0;
  std::vector<std::uint64_t> by_fault = std::vector<std::uint64_t>(kMachineFaultCount, 0);
  std::vector<std::uint64_t> by_collective = std::vector<std::uint64_t>(3, 0);  // as MachineScenario::collective
  std::vector<std::string> failures;  // "seed S: problem (scenario)", the first 20
};

// "" when the scenario held; otherwise the problem, prefixed "liveness: " or "safety: ".
std::string runMachineScenario(const MachineScenario& scenario, MachineCampaignReport& report);
MachineCampaignReport runMachineCampaign(std::uint64_t first_seed, std::uint64_t seeds);

// `peerreduce-sim campaign machines [--seeds N] [--seed S]`: the exit status (0 passed, 1 failed, 2 bad input).
int machineCampaignMain(const std::vector<std::string>& args);

}  // namespace peerreduce::sim::campaign
