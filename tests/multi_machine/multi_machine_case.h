// One allreduce across simulated machines, checked: the payloads derive from (seed, world rank), every
// rank's result is compared with the independent reference, with every other rank's bits, and the
// memory past each buffer's end is checked untouched.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "multi_machine_cluster.h"
#include "reference/reference.h"

namespace peerreduce::testing {

struct MultiMachineCase {
  int machines = 2;
  int ranks_per_machine = 2;
  std::size_t count = 64;
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  MachineStrategy strategy = MachineStrategy::kAuto;
  bool interleaved = false;
  bool in_place = false;
  std::uint64_t seed = 1;           // the payloads
  std::uint64_t schedule_seed = 1;  // the simulated worlds' interleavings
};

struct MultiMachineOutcome {
  std::string problem;               // "" when every check passed
  std::vector<std::uint8_t> result;  // rank 0's output
  std::uint64_t fingerprint = 0;     // the worlds' schedules
};

inline Config multiMachineTestConfig() {
  Config config;
  config.scratch_bytes = std::size_t{1} << 20;
  config.memory.pool_bytes = std::size_t{4} << 20;
  return config;
}

inline sim::MultiMachineSimOptions optionsOf(const MultiMachineCase& c) {
  sim::MultiMachineSimOptions o;
  o.machines = c.machines;
  o.ranks_per_machine = c.ranks_per_machine;
  o.interleaved = c.interleaved;
  o.seed = c.schedule_seed;
  return o;
}

// The case's simulated world with every rank's communicator; null (and a test failure) when creation failed.
inline std::unique_ptr<sim::MultiMachineSimCluster> makeCluster(const MultiMachineCase& c) {
  auto cluster = sim::MultiMachineSimCluster::create(optionsOf(c), multiMachineTestConfig());
  EXPECT_TRUE(cluster.isOk()) << cluster.status().toString();
  return cluster.isOk() ? std::move(*cluster) : nullptr;
}

inline MultiMachineOutcome runMultiMachineCase(sim::MultiMachineSimCluster& cluster, const MultiMachineCase& c) {
  constexpr std::size_t kGuard = 64;
  const int n = cluster.size();
  const std::size_t bytes = c.count * referenceElementSize(c.dtype);
  std::vector<std::vector<std::uint8_t>> inputs(static_cast<std::size_t>(n));
  std::vector<std::vector<std::uint8_t>> outputs(static_cast<std::size_t>(n));
  std::vector<const void*> send;
  std::vector<void*> recv;
  std::vector<const void*> reference_inputs;
  for (int r = 0; r < n; ++r) {
    auto& in = inputs[static_cast<std::size_t>(r)];
    in.assign(bytes + kGuard, 0xA5);
    fillPayload(c.dtype, c.op, c.seed, r, in.data(), c.count);
    reference_inputs.push_back(in.data());
  }
  // The reference reads the inputs before an in-place run overwrites them.
  const ReferenceResult ref = referenceReduce(c.dtype, c.op, reference_inputs, c.count);
  for (int r = 0; r < n; ++r) {
    auto& in = inputs[static_cast<std::size_t>(r)];
    auto& out = outputs[static_cast<std::size_t>(r)];
    if (c.in_place) {
      send.push_back(in.data());
      recv.push_back(in.data());
    } else {
      out.assign(bytes + kGuard, 0x5A);
      send.push_back(in.data());
      recv.push_back(out.data());
    }
  }
  MultiMachineOutcome outcome;
  const std::vector<Status> statuses = cluster.allreduce(send, recv, c.count, c.dtype, c.op, c.strategy);
  for (int r = 0; r < n && outcome.problem.empty(); ++r) {
    if (!statuses[static_cast<std::size_t>(r)].isOk()) {
      outcome.problem = "rank " + std::to_string(r) + ": " + statuses[static_cast<std::size_t>(r)].toString();
    }
  }
  const auto* first = static_cast<const std::uint8_t*>(recv[0]);
  for (int r = 0; r < n && outcome.problem.empty(); ++r) {
    const auto* got = static_cast<const std::uint8_t*>(recv[static_cast<std::size_t>(r)]);
    const std::string wrong = compareToReference(c.dtype, c.op, ref, got, c.count);
    if (!wrong.empty()) outcome.problem = "rank " + std::to_string(r) + " against the reference: " + wrong;
    if (outcome.problem.empty() && std::memcmp(got, first, bytes) != 0) {
      outcome.problem = "rank " + std::to_string(r) + "'s bits differ from rank 0's";
    }
    for (std::size_t g = 0; g < kGuard && outcome.problem.empty(); ++g) {
      if (got[bytes + g] != (c.in_place ? 0xA5 : 0x5A)) {
        outcome.problem = "rank " + std::to_string(r) + " wrote past its buffer";
      }
    }
  }
  const auto races = cluster.world().raceReports();
  if (outcome.problem.empty() && !races.empty()) outcome.problem = "race: " + races.front();
  outcome.result.assign(first, first + bytes);
  outcome.fingerprint = cluster.world().traceFingerprint();
  return outcome;
}

}  // namespace peerreduce::testing
