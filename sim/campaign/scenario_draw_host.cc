// drawHostStaged: the host-staged part of a scenario, from a PRNG stream of its own, so every draw of
// drawScenario before it is the same as before host-staged worlds existed.
//
// A third of the scenarios get a world without peer access: every pair linked through pinned host
// memory (the machine's links are host-staged, and the link mask says host:all as a GPU world's would),
// a 1 MiB pinned limit, and the host-staged fault kinds in the swarm's mix, each with probability 1/2:
// a host-staged path that dies (in the middle of an operation when its step is above 0), a stalled host
// copy, and the rank's pinned memory exhausted before an operation of the run.
#include "prng.h"
#include "scenario.h"
#include "topology/generators.h"

namespace peerreduce::sim::campaign {

void drawHostStaged(Scenario& s) {
  using faults::Fault;
  using faults::FaultKind;
  Prng prng(deriveSeed(s.seed, 0x4057));
  if (!prng.chance(1.0 / 3.0)) return;
  const int n = s.ranks;
  s.topology = Topology::fullMesh(n, defaultHostStagedLink());
  s.topology_name = "host-staged";
  s.link_mask = "host:all";
  const auto ops = static_cast<std::uint64_t>(s.ops.size());
  for (FaultKind kind : {FaultKind::kHostLinkDown, FaultKind::kHostCopyStall, FaultKind::kPinnedExhausted}) {
    if (!prng.chance(0.5)) continue;
    s.mix.enable(kind);
    Fault f;
    f.kind = kind;
    f.rank = static_cast<int>(prng.below(static_cast<std::uint64_t>(n)));
    f.op = static_cast<int>(prng.below(ops));
    f.step = prng.below(12);
    if (kind == FaultKind::kHostLinkDown) {
      f.peer =
          static_cast<int>((static_cast<std::uint64_t>(f.rank) + 1 + prng.below(static_cast<std::uint64_t>(n - 1))) %
                           static_cast<std::uint64_t>(n));
    }
    if (kind == FaultKind::kHostCopyStall) {
      f.duration_us = static_cast<double>(prng.between(10, static_cast<std::int64_t>(2 * kScenarioWaitTimeoutUs)));
    }
    s.faults.push_back(f);
  }
}

}  // namespace peerreduce::sim::campaign
