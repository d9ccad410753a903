// drawScenario: a pure function of the seed (so a failing seed replays bit for bit).
#include <algorithm>

#include "prng.h"
#include "scenario.h"
#include "scenario_collectives.h"

namespace peerreduce::sim::campaign {
namespace {

using faults::Fault;
using faults::FaultKind;

bool connected(const Topology& t) {
  const int n = t.worldSize();
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  std::vector<int> frontier{0};
  seen[0] = 1;
  for (std::size_t k = 0; k < frontier.size(); ++k) {
    for (int b = 0; b < n; ++b) {
      if (!seen[static_cast<std::size_t>(b)] && t.link(frontier[k], b).connected()) {
        seen[static_cast<std::size_t>(b)] = 1;
        frontier.push_back(b);
      }
    }
  }
  return static_cast<int>(frontier.size()) == n;
}

// A link of the topology, drawn uniformly; false when there is none.
bool drawLink(Prng& prng, const Topology& t, int* a, int* b) {
  std::vector<std::pair<int, int>> links;
  for (int x = 0; x < t.worldSize(); ++x) {
    for (int y = 0; y < t.worldSize(); ++y) {
      if (x != y && t.link(x, y).connected()) links.emplace_back(x, y);
    }
  }
  if (links.empty()) return false;
  const auto& l = links[prng.below(links.size())];
  *a = l.first;
  *b = l.second;
  return true;
}

}  // namespace

Scenario drawScenario(std::uint64_t seed) {
  Prng prng(deriveSeed(seed, 0xfa017));
  Scenario s;
  s.seed = seed;
  s.ranks = static_cast<int>(prng.between(2, 8));
  const int n = s.ranks;
  s.topology = Topology::fullMesh(n);
  s.topology_name = "full-mesh";
  const std::uint64_t shape = prng.below(3);
  if (shape == 1 && n >= 3) {
    s.topology = Topology(n);
    for (int r = 0; r < n; ++r) s.topology.setBidirectional(r, (r + 1) % n, Topology::defaultNvLink());
    s.topology_name = "ring";
  } else if (shape == 2 && n >= 3) {
    // Partial connectivity: a full mesh missing a few pairs, still connected.
    const int remove = static_cast<int>(prng.between(1, n - 1));
    int removed = 0;
    for (int tries = 0; tries < 4 * n && removed < remove; ++tries) {
      const int a = static_cast<int>(prng.below(static_cast<std::uint64_t>(n)));
      const int b = static_cast<int>(prng.below(static_cast<std::uint64_t>(n)));
      if (a == b || !s.topology.link(a, b).connected()) continue;
      Topology trial = s.topology;
      trial.setBidirectional(a, b, LinkInfo{});
      if (!connected(trial)) continue;
      s.topology = trial;
      ++removed;
    }
    s.topology_name = "mesh-minus-" + std::to_string(removed);
  }
  const int ops = static_cast<int>(prng.between(1, 4));
  constexpr DataType kTypes[] = {DataType::kInt32, DataType::kInt64, DataType::kUint8};
  constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin};
  for (int k = 0; k < ops; ++k) {
    ScenarioOp op;
    op.count = static_cast<std::size_t>(prng.between(1, 3000));
    op.dtype = kTypes[prng.below(3)];
    op.op = kOps[prng.below(3)];
    s.ops.push_back(op);
  }
  // Swarm testing: each kind is in this run's mix with probability 1/2.
  // (Host-staged kinds come from drawHostStaged's stream: these draws stay what they were.)
  for (int k = 0; k < faults::kFaultKindCount; ++k) {
    // Probe faults come from drawProbeFailures' stream: these draws stay what they were.
    if (faults::isHostStagedFault(static_cast<FaultKind>(k)) || faults::isProbeFault(static_cast<FaultKind>(k))) {
      continue;
    }
    if (prng.chance(0.5)) s.mix.enable(static_cast<FaultKind>(k));
  }
  s.buggify_sites = static_cast<std::uint32_t>(prng.below(8));
  drawCollectives(s);
  // Ranks that die for good; at least one rank always survives.
  std::vector<char> doomed(static_cast<std::size_t>(n), 0);
  int doomed_count = 0;
  for (int k = 0; k < faults::kFaultKindCount; ++k) {
    const auto kind = static_cast<FaultKind>(k);
    if (!s.mix.has(kind)) continue;
    const int how_many = prng.chance(0.3) ? 2 : 1;
    for (int i = 0; i < how_many; ++i) {
      Fault f;
      f.kind = kind;
      f.rank = static_cast<int>(prng.below(static_cast<std::uint64_t>(n)));
      f.op = static_cast<int>(prng.below(static_cast<std::uint64_t>(ops)));
      f.step = prng.below(12);
      switch (kind) {
        case FaultKind::kLinkDown:
        case FaultKind::kLinkDownOneWay:
        case FaultKind::kDelayedSignal:
          if (!drawLink(prng, s.topology, &f.rank, &f.peer)) continue;
          f.duration_us = static_cast<double>(prng.between(10, static_cast<std::int64_t>(2 * kScenarioWaitTimeoutUs)));
          break;
        case FaultKind::kStall:
          f.duration_us = static_cast<double>(prng.between(10, static_cast<std::int64_t>(2 * kScenarioWaitTimeoutUs)));
          break;
        case FaultKind::kCrash:
        case FaultKind::kStallForever:
          if (doomed[static_cast<std::size_t>(f.rank)] || doomed_count + 1 >= n) continue;
          doomed[static_cast<std::size_t>(f.rank)] = 1;
          ++doomed_count;
          break;
        case FaultKind::kIpcOpenFailure:
        case FaultKind::kCorruptRecord:
        case FaultKind::kTruncatedRecord:
          f.peer = static_cast<int>(
              (static_cast<std::uint64_t>(f.rank) + 1 + prng.below(static_cast<std::uint64_t>(n - 1))) %
              static_cast<std::uint64_t>(n));
          break;
        case FaultKind::kPoolExhaustedTransient:
        case FaultKind::kPoolExhaustedPersistent:
          break;
        case FaultKind::kHostLinkDown:
        case FaultKind::kHostCopyStall:
        case FaultKind::kPinnedExhausted:
          continue;  // never in this mix (drawHostStaged)
        case FaultKind::kProbeFailure:
        case FaultKind::kProbeFailurePersistent:
          continue;  // never in this mix (drawProbeFailures)
      }
      s.faults.push_back(f);
    }
  }
  drawHostStaged(s);
  drawProbeFailures(s);
  return s;
}

std::string Scenario::describe() const {
  std::string out = "seed " + std::to_string(seed) + ": " + std::to_string(ranks) + " ranks, " + topology_name +
                    (link_mask.empty() ? "" : " with link mask " + link_mask) + ", " + std::to_string(ops.size()) +
                    " ops, mix " + mix.describe() + "; faults:";
  if (faults.empty()) out += " none";
  for (const auto& f : faults) out += " [" + f.describe() + "]";
  return out;
}

}  // namespace peerreduce::sim::campaign
