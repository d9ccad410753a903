// One reduce-scatter or all-gather across simulated machines, checked: payloads derive from (seed, world
// rank); every rank's result is compared with the independent reference (reduce-scatter: its block,
// within the float tolerance and exact for integers; all-gather: exactly, so every rank holds the same
// bits), and the memory past each buffer's end is checked untouched.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "multi_machine_case.h"

namespace peerreduce::testing {

struct MultiMachineCollectiveOutcome {
  std::string problem;                            // "" when every check passed
  std::vector<std::vector<std::uint8_t>> result;  // every rank's output
  std::uint64_t fingerprint = 0;                  // the worlds' schedules
};

// `c.count` is the count per rank (reduce-scatter's recvcount, all-gather's sendcount).
inline MultiMachineCollectiveOutcome runMultiMachineCollectiveCase(sim::MultiMachineSimCluster& cluster,
                                                                   const MultiMachineCase& c, Collective collective) {
  constexpr std::size_t kGuard = 64;
  const int n = cluster.size();
  const auto world = static_cast<std::size_t>(n);
  const std::size_t elem = referenceElementSize(c.dtype);
  const bool scatter = collective == Collective::kReduceScatter;
  const std::size_t in_count = scatter ? world * c.count : c.count;  // elements each rank sends
  const std::size_t out_count = scatter ? c.count : world * c.count;
  // In place, the large buffer (reduce-scatter's send, all-gather's recv) is the one buffer.
  std::vector<std::vector<std::uint8_t>> large(world), small(world), inputs(world);
  std::vector<const void*> reference_inputs;
  for (int r = 0; r < n; ++r) {
    const auto i = static_cast<std::size_t>(r);
    inputs[i].assign(in_count * elem, 0);
    fillPayload(c.dtype, c.op, c.seed, r, inputs[i].data(), in_count);
    reference_inputs.push_back(inputs[i].data());
    large[i].assign(world * c.count * elem + kGuard, 0x5A);
    small[i].assign(c.count * elem + kGuard, 0xA5);
    if (in_count == 0) continue;  // nothing to place (and an empty vector's data() may be null)
    if (scatter) std::memcpy(large[i].data(), inputs[i].data(), in_count * elem);
    if (!scatter)
      std::memcpy(c.in_place ? large[i].data() + i * c.count * elem : small[i].data(), inputs[i].data(),
                  in_count * elem);
  }
  auto outputOf = [&](int r) -> std::uint8_t* {
    const auto i = static_cast<std::size_t>(r);
    if (!scatter) return large[i].data();
    return c.in_place ? large[i].data() + i * c.count * elem : small[i].data();
  };
  MultiMachineCollectiveOutcome outcome;
  const std::vector<Status> statuses = cluster.run([&](MultiMachineCommunicator& comm, int r) {
    const auto i = static_cast<std::size_t>(r);
    if (scatter) return comm.reduceScatter(large[i].data(), outputOf(r), c.count, c.dtype, c.op, nullptr, c.strategy);
    const void* send = c.in_place ? large[i].data() + i * c.count * elem : small[i].data();
    return comm.allGather(send, large[i].data(), c.count, c.dtype, nullptr, c.strategy);
  });
  for (int r = 0; r < n && outcome.problem.empty(); ++r) {
    if (!statuses[static_cast<std::size_t>(r)].isOk()) {
      outcome.problem = "rank " + std::to_string(r) + ": " + statuses[static_cast<std::size_t>(r)].toString();
    }
  }
  const std::vector<std::uint8_t> gathered =
      scatter ? std::vector<std::uint8_t>{} : referenceAllGather(c.dtype, reference_inputs, c.count);
  for (int r = 0; r < n && outcome.problem.empty(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    const std::uint8_t* got = outputOf(r);
    const std::string wrong =
        scatter ? compareToReference(c.dtype, c.op, referenceReduceScatter(c.dtype, c.op, reference_inputs, c.count, r),
                                     got, c.count)
                : compareExactly(c.dtype, gathered, got);
    if (!wrong.empty()) outcome.problem = "rank " + std::to_string(r) + " against the reference: " + wrong;
    // Past the buffer that holds every block, and past reduce-scatter's own recv.
    for (std::size_t g = 0; g < kGuard && outcome.problem.empty(); ++g) {
      if (large[i][world * c.count * elem + g] != 0x5A || small[i][c.count * elem + g] != 0xA5) {
        outcome.problem = "rank " + std::to_string(r) + " wrote past its buffer";
      }
    }
    outcome.result.emplace_back(got, got + out_count * elem);
  }
  const auto races = cluster.world().raceReports();
  if (outcome.problem.empty() && !races.empty()) outcome.problem = "race: " + races.front();
  outcome.fingerprint = cluster.world().traceFingerprint();
  return outcome;
}

}  // namespace peerreduce::testing
