// One campaign scenario: a small simulated world, a few collectives (allreduce, reduce-scatter, all-gather,
// broadcast), faults drawn from a seed.
//
// drawScenario(seed) is a pure function of the seed (the project's PRNG, no std distributions), so
// a failing seed replays bit for bit. runScenario executes it: creation (with creation faults and
// a retry after they heal), then each operation with its faults; when an operation fails, the
// survivors abort, agree on the failed ranks and links, shrink, and must complete a fault-free
// allreduce on the shrunk world (liveness). Safety is checked on every operation: a rank that
// reports success holds the exact result, nothing outside the output changed, errors are typed and
// name a rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "faults/fault_plan.h"
#include "peerreduce/topology.h"
#include "peerreduce/types.h"

namespace peerreduce::sim::campaign {

// Virtual deadline of every wait in a scenario: short, so a stall "for a while" can outlast it.
inline constexpr double kScenarioWaitTimeoutUs = 5000.0;
// Liveness: a fault-free allreduce on the shrunk world must finish within this virtual time.
inline constexpr double kRecoveryBoundUs = 2000.0;

struct ScenarioOp {
  std::size_t count = 0;  // per rank's block (scenario_collectives.h)
  DataType dtype = DataType::kInt32;
  ReduceOp op = ReduceOp::kSum;
  Collective collective = Collective::kAllReduce;
  int root = 0;  // broadcast: the root, modulo the ranks left
};

struct Scenario {
  std::uint64_t seed = 0;
  int ranks = 2;
  std::string topology_name;  // "full-mesh", "ring", "mesh-minus-K"
  Topology topology;
  // "host:all" for a world without peer access (every pair host-staged through pinned host memory, with a
  // small pinned limit, kHostStagedPinnedLimitBytes); empty otherwise. Drawn with the host-staged fault
  // kinds from a stream of its own (scenario_draw_host.cc), so the other draws of a seed do not change.
  std::string link_mask;
  std::vector<ScenarioOp> ops;
  faults::FaultMix mix;
  std::vector<faults::Fault> faults;  // ranks are the original ranks
  std::uint32_t buggify_sites = 0;    // BuggifySite bits switched on for this run
  std::string describe() const;
};

// The pinned limit of a host-staged scenario: small, so exhausting it costs little memory.
inline constexpr std::size_t kHostStagedPinnedLimitBytes = std::size_t{1} << 20;

Scenario drawScenario(std::uint64_t seed);
// The host-staged part of a scenario (scenario_draw_host.cc): whether its world has no peer access and,
// if so, the host-staged fault kinds of its mix and their faults.
void drawHostStaged(Scenario& s);
// Failed access probes at creation (scenario_draw_probe.cc), from a stream of their own.
void drawProbeFailures(Scenario& s);

// What one fault kind did in a scenario.
struct KindOutcome {
  int injected = 0;
  int ops_failed = 0;        // operations that failed while a fault of this kind was in effect
  int recoveries = 0;        // shrinks that followed
  double recovery_us = 0.0;  // sum: detection (virtual time of the failed operation) + first allreduce after
  double max_recovery_us = 0.0;
};

struct ScenarioResult {
  std::uint64_t seed = 0;
  bool safety_ok = true;
  bool liveness_ok = true;
  std::string problem;  // first problem, empty when both hold
  int ops_ok = 0;
  int ops_failed = 0;
  int creation_refusals = 0;
  int shrinks = 0;
  std::vector<KindOutcome> kinds = std::vector<KindOutcome>(faults::kFaultKindCount);
  std::vector<int> error_codes = std::vector<int>(16, 0);  // by ErrorCode value, every rank error seen
  std::uint64_t buggify_fired = 0;
  std::uint64_t fingerprint = 0;  // of outcomes and schedules: equal on a replay
};

struct ScenarioOptions {
  bool swallow_errors_canary = false;  // the deliberately broken injector (must be caught)
};

ScenarioResult runScenario(const Scenario& scenario, const ScenarioOptions& options);

}  // namespace peerreduce::sim::campaign
