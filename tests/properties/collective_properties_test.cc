// Properties of reduce-scatter, all-gather and broadcast, on simulated worlds of random size (or the
// hardware's world, through the world provider): any world, count, dtype, op, algorithm, placement,
// offsets, root and seed give the reference result with untouched memory around the buffers and no
// race; a rerun under another schedule gives the same bits; and mixed sequences of every collective,
// allreduce included, enqueued back to back stay correct.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>

#include "collective_case.h"
#include "generators.h"
#include "sim/prng.h"
#include "topology/generators.h"
#include "topology/routes.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kCollectivePropertiesTestScratchBytes = std::size_t{1} << 20;  // small, so large counts segment
constexpr std::size_t kCollectivePropertiesTestPoolBytes = std::size_t{4}
                                                           << 20;  // just above the scratch (see allreduce's)
// Most elements of a rank's larger buffer (size x count for reduce-scatter and all-gather): keeps a
// case of 64 ranks within memory and time under the sanitizers.
constexpr std::size_t kMaxElementsPerRank = 300000;

std::shared_ptr<TestWorld> makeCollectiveWorld(int size, Algorithm algorithm, std::uint64_t sim_seed) {
  Config config;
  config.algorithm = algorithm;
  config.scratch_bytes = kCollectivePropertiesTestScratchBytes;
  config.memory.pool_bytes = kCollectivePropertiesTestPoolBytes;
  auto world = worldProvider().acquire(size, config, sim_seed);
  RC_ASSERT(world.status().toString() == "ok");
  return std::move(world).value();
}

rc::Gen<Collective> genCollective() {
  return uniform(rc::gen::element(Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast));
}

// The algorithms a collective has (one-shot is its direct plan; recursive doubling is reduce-scatter's
// halving; two-shot is broadcast's scatter + all-gather; a collective without the algorithm chooses among
// its own), or auto.
rc::Gen<Algorithm> genCollectiveAlgorithm() {
  return uniform(rc::gen::element(Algorithm::kAuto, Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing,
                                  Algorithm::kRecursiveDoubling, Algorithm::kTree));
}

rc::Gen<CollectiveCase> genCollectiveCase() {
  return rc::gen::mapcat(genWorldSize(), [](int world_size) {
    return rc::gen::exec([world_size] {
      CollectiveCase c;
      c.world_size = world_size;
      c.collective = *genCollective();
      c.count = *genCount(world_size);
      if (c.collective != Collective::kBroadcast) {
        c.count = std::min(c.count, kMaxElementsPerRank / static_cast<std::size_t>(world_size));
      }
      c.dtype = *genDataType();
      c.op = *genReduceOp();
      c.algorithm = *genCollectiveAlgorithm();
      c.in_place = *rc::gen::arbitrary<bool>();
      c.send_offset = *uniform(rc::gen::inRange<std::size_t>(0, 8));
      c.recv_offset = *uniform(rc::gen::inRange<std::size_t>(0, 8));
      c.root = *uniform(rc::gen::inRange(0, world_size));
      c.seed = *uniform(rc::gen::arbitrary<std::uint64_t>());
      return c;
    });
  });
}

RC_GTEST_PROP(CollectiveProperty, MatchesReferenceOnEveryRank, ()) {
  const CollectiveCase c = *genCollectiveCase();
  RC_CLASSIFY(c.world_size == 1, "1 rank");
  RC_CLASSIFY(c.count == 0, "count 0");
  RC_TAG(collectiveName(c.collective));
  auto world = makeCollectiveWorld(c.world_size, c.algorithm, sim::deriveSeed(c.seed, 1));
  const CaseOutcome outcome = runCollectiveCase(*world, c);
  RC_ASSERT(outcome.problem == "");
}

// Reduce-scatter's avg is allreduce's (types.h): large finite inputs, whose sums overflow, average to the
// finite reference result on both plans.
RC_GTEST_PROP(CollectiveProperty, LargeInputsReduceScatterToAFiniteAverage, ()) {
  CollectiveCase c = *genCollectiveCase();
  c.collective = Collective::kReduceScatter;
  c.count = std::min(c.count, kMaxElementsPerRank / static_cast<std::size_t>(c.world_size));
  c.op = ReduceOp::kAvg;
  c.dtype = *genFloatDataType();
  c.payload = Payload::kLarge;
  RC_TAG(algorithmName(c.algorithm));
  RC_TAG(dataTypeName(c.dtype));
  auto world = makeCollectiveWorld(c.world_size, c.algorithm, sim::deriveSeed(c.seed, 1));
  const CaseOutcome outcome = runCollectiveCase(*world, c);
  RC_ASSERT(outcome.problem == "");
}

// On a random partial topology (links of random density, connected), every plan the collective's selector
// may pick there (relay trees, rings over a found cycle, recursive plans whose partners are linked),
// forced in turn, gives the reference result; the simulator refuses any step over a missing link.
RC_GTEST_PROP(CollectiveProperty, EveryPickablePlanOnAPartialTopologyIsCorrect, ()) {
  const int n = *uniform(rc::gen::inRange(2, 11));
  const double density = *uniform(rc::gen::inRange(30, 101)) / 100.0;
  const std::uint64_t topology_seed = *rc::gen::arbitrary<std::uint64_t>();
  auto topology = randomTopology(n, density, topology_seed);
  RC_ASSERT(topology.isOk());
  RC_PRE(checkConnected(*topology).isOk());
  CollectiveCase c = *genCollectiveCase();
  c.world_size = n;
  c.root = *uniform(rc::gen::inRange(0, n));
  c.count = std::min<std::size_t>(c.count, 20000);
  sim::SimOptions options;
  options.seed = sim::deriveSeed(topology_seed, 1);
  options.topology = *topology;
  Config config;
  config.scratch_bytes = kCollectivePropertiesTestScratchBytes;
  config.memory.pool_bytes = kCollectivePropertiesTestPoolBytes;
  auto world = makeSimTestWorld(n, options, config);
  RC_ASSERT(world.status().toString() == "ok");
  auto report = (*world)->comm(0).explainSelection(c.collective, c.count, c.dtype, c.root);
  RC_ASSERT(report.status().toString() == "ok");
  std::set<Algorithm> pickable;
  for (const auto& candidate : report->candidates) pickable.insert(candidate.algorithm);
  RC_ASSERT(pickable.count(report->chosen) == 1);
  RC_ASSERT(pickable.count(Algorithm::kTree) == 1);  // a connected world always has a relay tree
  RC_TAG(collectiveName(c.collective));
  for (Algorithm algorithm : pickable) {
    RC_TAG(algorithmName(algorithm));
    // The collective's own setting: PEERREDUCE_ALGO would force the allreduce too, which may not have it here.
    config.algorithmSettingOf(c.collective) = algorithm;
    auto forced = makeSimTestWorld(n, options, config);
    RC_ASSERT(forced.status().toString() == "ok");
    c.algorithm = algorithm;
    const CaseOutcome outcome = runCollectiveCase(**forced, c);
    RC_ASSERT(outcome.problem == "");
  }
}

// Another scheduler seed interleaves the ranks differently; the plan fixes every fold order, so the
// bits are the same.
RC_GTEST_PROP(CollectiveProperty, AnotherScheduleGivesTheSameBits, ()) {
  CollectiveCase c = *genCollectiveCase();
  c.count = *rc::gen::inRange<std::size_t>(1, 3000);
  const std::uint64_t sim_seed = *rc::gen::arbitrary<std::uint64_t>();
  auto first = makeCollectiveWorld(c.world_size, c.algorithm, sim_seed);
  const CaseOutcome a = runCollectiveCase(*first, c);
  RC_ASSERT(a.problem == "");
  auto other = makeCollectiveWorld(c.world_size, c.algorithm, sim_seed + 1);
  const CaseOutcome b = runCollectiveCase(*other, c);
  RC_ASSERT(b.problem == "");
  RC_ASSERT(a.result_hash == b.result_hash);
}

// Every collective and allreduce, back to back on one set of communicators before any completes.
RC_GTEST_PROP(CollectiveProperty, MixedBackToBackOperationsStayCorrect, ()) {
  const int world_size = *genWorldSize();
  auto world = makeCollectiveWorld(world_size, Algorithm::kAuto, *rc::gen::arbitrary<std::uint64_t>());
  const int operations = *rc::gen::inRange(2, 7);
  std::vector<CollectiveCase> cases;
  for (int i = 0; i < operations; ++i) {
    CollectiveCase c = *genCollectiveCase();
    c.world_size = world_size;
    c.root = *rc::gen::inRange(0, world_size);
    c.count = std::min(c.count, kMaxElementsPerRank / static_cast<std::size_t>(world_size));
    cases.push_back(c);
  }
  // An allreduce before and after them, so each collective follows and precedes another kind.
  AllreduceCase before;
  before.world_size = world_size;
  before.count = *genCount(world_size);
  before.seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_ASSERT(runAllreduceCase(*world, before).problem == "");
  for (const CaseOutcome& outcome : runCollectiveCases(*world, cases)) RC_ASSERT(outcome.problem == "");
  RC_ASSERT(runAllreduceCase(*world, before).problem == "");
}

}  // namespace
}  // namespace peerreduce::testing
