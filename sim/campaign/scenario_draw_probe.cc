// drawProbeFailures: failed access probes at creation, from a PRNG stream of their own, so every other
// draw of a scenario is the same as before they existed.
//
// A quarter of the scenarios whose machine has direct links get one linked pair whose probe fails on one
// side (faults_probe.cc): creation must fall back to a host-staged link for the pair and every operation
// of the run must still be exact. One in eight of those fails on the host-staged path too, so creation
// fails with a typed error naming the pair, and the run goes on in a world created without the fault.
#include "prng.h"
#include "scenario.h"

namespace peerreduce::sim::campaign {

void drawProbeFailures(Scenario& s) {
  using faults::Fault;
  using faults::FaultKind;
  Prng prng(deriveSeed(s.seed, 0x9b0e));
  if (!prng.chance(0.25) || s.link_mask == "host:all") return;
  const int n = s.ranks;
  Fault f;
  f.kind = prng.chance(0.125) ? FaultKind::kProbeFailurePersistent : FaultKind::kProbeFailure;
  f.rank = static_cast<int>(prng.below(static_cast<std::uint64_t>(n)));
  // A linked peer (bounded: the first linked one after a drawn start, if any).
  const int start = static_cast<int>(prng.below(static_cast<std::uint64_t>(n)));
  for (int k = 0; k < n; ++k) {
    const int peer = (start + k) % n;
    if (peer == f.rank || !s.topology.canAccess(f.rank, peer)) continue;
    f.peer = peer;
    s.mix.enable(f.kind);
    s.faults.push_back(f);
    return;
  }
}

}  // namespace peerreduce::sim::campaign
