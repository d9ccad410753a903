// Properties of worlds whose links are host-staged (the link mask's host:A-B and host:all entries), on the
// simulator: some pairs or every pair host-staged, on a machine with peer access or on one without any, with
// some pairs removed as well. Every algorithm the topology allows gives the reference result with identical
// bits on every rank, for allreduce and for reduce-scatter, all-gather and broadcast; the data of
// host-staged links passes through the communicators' pinned pools (their statistics count it, and every
// block is back in the pool afterwards); a mask that cuts the world apart is refused on every rank.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "collective_case.h"
#include "generators.h"
#include "sim/prng.h"
#include "topology/generators.h"
#include "topology/routes.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kHostStagedPropertiesTestScratchBytes = std::size_t{1} << 20;
constexpr std::size_t kHostStagedPropertiesTestPoolBytes = std::size_t{4}
                                                           << 20;  // just above the scratch (see allreduce's)

enum class HostMaskKind { kEveryPair, kSomePairs, kEveryPairSomeRemoved };

struct HostStagedDraw {
  int world_size = 2;
  bool machine_has_peer_access = true;  // false: the machine has no link at all, only host memory
  HostMaskKind kind = HostMaskKind::kEveryPair;
  std::string mask;
};

std::string pairsWithProbability(int world_size, double fraction, std::uint64_t seed, const std::string& prefix) {
  sim::Prng prng(seed);
  std::string mask;
  for (int a = 0; a < world_size; ++a) {
    for (int b = a + 1; b < world_size; ++b) {
      if (prng.unit() >= fraction) continue;
      mask += (mask.empty() ? "" : ",") + prefix + std::to_string(a) + "-" + std::to_string(b);
    }
  }
  return mask;
}

// `allow_removals`: whether the mask may also remove pairs (which may disconnect the world).
rc::Gen<HostStagedDraw> genHostStagedDraw(bool allow_removals) {
  return rc::gen::exec([allow_removals] {
    HostStagedDraw d;
    d.world_size = *uniform(rc::gen::inRange(2, 9));
    d.kind = allow_removals ? *uniform(rc::gen::element(HostMaskKind::kEveryPair, HostMaskKind::kSomePairs,
                                                        HostMaskKind::kEveryPairSomeRemoved))
                            : *uniform(rc::gen::element(HostMaskKind::kEveryPair, HostMaskKind::kSomePairs));
    // Some pairs on a machine without peer access would leave it in pieces: such machines get host:all.
    d.machine_has_peer_access = d.kind == HostMaskKind::kSomePairs || *rc::gen::arbitrary<bool>();
    const std::uint64_t seed = *uniform(rc::gen::arbitrary<std::uint64_t>());
    const double fraction = *uniform(rc::gen::inRange(10, 101)) / 100.0;
    switch (d.kind) {
      case HostMaskKind::kEveryPair:
        d.mask = "host:all";
        break;
      case HostMaskKind::kSomePairs:
        d.mask = pairsWithProbability(d.world_size, fraction, seed, "host:");
        break;
      case HostMaskKind::kEveryPairSomeRemoved: {
        const std::string removed = pairsWithProbability(d.world_size, fraction * 0.4, seed, "");
        d.mask = "host:all" + (removed.empty() ? "" : "," + removed);
        break;
      }
    }
    return d;
  });
}

sim::SimOptions machineOf(const HostStagedDraw& d, std::uint64_t sim_seed) {
  sim::SimOptions options;
  options.seed = sim_seed;
  options.topology = d.machine_has_peer_access ? Topology::fullMesh(d.world_size) : Topology(d.world_size);
  return options;
}

Config configOf(const HostStagedDraw& d, Algorithm algorithm) {
  Config config;
  config.algorithm = algorithm;
  config.scratch_bytes = kHostStagedPropertiesTestScratchBytes;
  config.memory.pool_bytes = kHostStagedPropertiesTestPoolBytes;
  config.link_mask = d.mask;
  return config;
}

void classify(const HostStagedDraw& d) {
  RC_CLASSIFY(d.kind == HostMaskKind::kEveryPair, "host:all");
  RC_CLASSIFY(d.kind == HostMaskKind::kSomePairs, "some pairs host-staged");
  RC_CLASSIFY(d.kind == HostMaskKind::kEveryPairSomeRemoved, "host:all and removals");
  RC_CLASSIFY(!d.machine_has_peer_access, "no peer access");
}

// After the runs: where every link is host-staged, something was staged; every staged block is back.
void checkPinnedTraffic(TestWorld& world, const HostStagedDraw& d, bool moved_data) {
  std::uint64_t staged = 0;
  for (int r : world.localRanks()) {
    const PinnedStats stats = world.comm(r).pinnedStats();
    RC_ASSERT(stats.bytes_in_use == 0u);
    RC_ASSERT(stats.failures == 0u);
    staged += stats.bytes_staged;
  }
  if (d.kind != HostMaskKind::kSomePairs && moved_data) RC_ASSERT(staged > 0u);
}

RC_GTEST_PROP(HostStagedProperty, AllreduceOnHostStagedLinksMatchesReferenceOnEveryRank, ()) {
  const HostStagedDraw d = *genHostStagedDraw(true);
  classify(d);
  const std::uint64_t sim_seed = *uniform(rc::gen::arbitrary<std::uint64_t>());
  auto masked = applyLinkMask(machineOf(d, sim_seed).topology, d.mask);
  RC_ASSERT(masked.isOk());
  auto world = makeSimTestWorld(d.world_size, machineOf(d, sim_seed), configOf(d, Algorithm::kAuto));
  if (!checkConnected(*masked).isOk()) {
    RC_ASSERT(!world.isOk());
    RC_ASSERT(world.status().code() ==
              (d.machine_has_peer_access ? ErrorCode::kInvalidArgument : ErrorCode::kUnavailable));
    return;
  }
  RC_ASSERT(world.status().toString() == "ok");

  AllreduceCase c;
  c.world_size = d.world_size;
  c.count = *genSmallCount(d.world_size);
  c.dtype = *genDataType();
  c.op = *genReduceOp();
  c.in_place = *rc::gen::arbitrary<bool>();
  c.seed = *uniform(rc::gen::arbitrary<std::uint64_t>());
  const CaseOutcome automatic = runAllreduceCase(**world, c);
  RC_ASSERT(automatic.problem == "");
  checkPinnedTraffic(**world, d, c.count > 0);

  // One algorithm the topology allows, forced: the same reference result, and for exact arithmetic the
  // same bits as the automatic choice.
  auto report = (*world)->comm(0).explainSelection(c.count, c.dtype);
  RC_ASSERT(report.isOk());
  std::vector<Algorithm> pickable;
  for (const auto& candidate : report->candidates) pickable.push_back(candidate.algorithm);
  RC_ASSERT(!pickable.empty());
  const Algorithm forced = *rc::gen::elementOf(pickable);
  RC_TAG(algorithmName(forced));
  auto forced_world = makeSimTestWorld(d.world_size, machineOf(d, sim_seed), configOf(d, forced));
  RC_ASSERT(forced_world.status().toString() == "ok");
  c.algorithm = forced;
  const CaseOutcome outcome = runAllreduceCase(**forced_world, c);
  RC_ASSERT(outcome.problem == "");
  checkPinnedTraffic(**forced_world, d, c.count > 0);
  if (!isFloatingPoint(c.dtype) && c.op != ReduceOp::kAvg) RC_ASSERT(outcome.result_hash == automatic.result_hash);
}

RC_GTEST_PROP(HostStagedProperty, CollectivesOnHostStagedLinksMatchReferenceOnEveryRank, ()) {
  // No removals: every pair stays linked, so every collective has every plan.
  const HostStagedDraw d = *genHostStagedDraw(false);
  classify(d);
  CollectiveCase c;
  c.world_size = d.world_size;
  c.collective = *uniform(rc::gen::element(Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast));
  c.count = *genSmallCount(d.world_size);
  c.dtype = *genDataType();
  c.op = *genReduceOp();
  c.algorithm = *uniform(rc::gen::element(Algorithm::kAuto, Algorithm::kOneShot, Algorithm::kRing));
  c.in_place = *rc::gen::arbitrary<bool>();
  c.root = *uniform(rc::gen::inRange(0, d.world_size));
  c.seed = *uniform(rc::gen::arbitrary<std::uint64_t>());
  RC_TAG(collectiveName(c.collective));
  RC_TAG(algorithmName(c.algorithm));
  auto world = makeSimTestWorld(d.world_size, machineOf(d, sim::deriveSeed(c.seed, 1)), configOf(d, c.algorithm));
  RC_ASSERT(world.status().toString() == "ok");
  const CaseOutcome outcome = runCollectiveCase(**world, c);
  RC_ASSERT(outcome.problem == "");
  checkPinnedTraffic(**world, d, c.count > 0);
}

}  // namespace
}  // namespace peerreduce::testing
