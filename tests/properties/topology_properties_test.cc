// Properties of the allreduce over partial connectivity: random topologies and random link masks.
// Every algorithm the selector may pick on a topology must give the reference result with identical
// bits on every rank (plans are verified against the topology's links when they are built, and the
// simulator refuses any step over a missing link); a world that cannot be connected must fail to
// create with a typed error naming the unreachable ranks, on every rank.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "generators.h"
#include "sim/prng.h"
#include "text_contains.h"
#include "topology/generators.h"
#include "topology/routes.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kTopologyPropertiesTestScratchBytes = std::size_t{1} << 20;
// A pool just large enough for the scratch: every case maps a fresh region per rank, and the default
// 64 MiB per rank would make world creation, not the allreduce, the cost of a case.
constexpr std::size_t kTopologyPropertiesTestPoolBytes = std::size_t{4} << 20;

// Random density in [0.1, 1.0] and a seed: connected and disconnected worlds both come up often.
struct TopologyDraw {
  int world_size = 2;
  double density = 1.0;
  std::uint64_t seed = 0;
  std::string mask;
};

// A random mask over `world_size` ranks: each pair is forbidden with probability `fraction`.
std::string randomMask(int world_size, double fraction, std::uint64_t seed) {
  sim::Prng prng(seed);
  std::string mask;
  for (int a = 0; a < world_size; ++a) {
    for (int b = a + 1; b < world_size; ++b) {
      if (prng.unit() >= fraction) continue;
      mask += (mask.empty() ? "" : ",") + std::to_string(a) + "-" + std::to_string(b);
    }
  }
  return mask;
}

rc::Gen<TopologyDraw> genTopologyDraw() {
  return rc::gen::map(uniform(rc::gen::tuple(rc::gen::inRange(2, 17), rc::gen::inRange(10, 101),
                                             rc::gen::arbitrary<std::uint64_t>(), rc::gen::inRange(0, 40))),
                      [](const std::tuple<int, int, std::uint64_t, int>& t) {
                        TopologyDraw d;
                        d.world_size = std::get<0>(t);
                        d.density = std::get<1>(t) / 100.0;
                        d.seed = std::get<2>(t);
                        d.mask = randomMask(d.world_size, std::get<3>(t) / 100.0, sim::deriveSeed(d.seed, 7));
                        return d;
                      });
}

// The simulated machine (random links with the mask removed) and the config that masks the same pairs.
Topology simulatedTopology(const TopologyDraw& d) {
  auto topology = randomTopology(d.world_size, d.density, d.seed);
  RC_ASSERT(topology.isOk());
  auto masked = applyLinkMask(*topology, d.mask);
  RC_ASSERT(masked.isOk());
  return *masked;
}

Config maskedConfig(const TopologyDraw& d, Algorithm algorithm) {
  Config config;
  config.algorithm = algorithm;
  config.scratch_bytes = kTopologyPropertiesTestScratchBytes;
  config.memory.pool_bytes = kTopologyPropertiesTestPoolBytes;
  config.link_mask = d.mask;
  return config;
}

// The ranks outside rank 0's group, as the error message lists them ("3,4,5").
std::string unreachableRanks(const Topology& topology) {
  const auto groups = connectedComponents(topology);
  std::string out;
  for (std::size_t g = 1; g < groups.size(); ++g) {
    for (int r : groups[g]) out += (out.empty() ? "" : ",") + std::to_string(r);
  }
  return out;
}

using peerreduce::testing::contains;

RC_GTEST_PROP(TopologyProperty, EveryPickableAlgorithmIsCorrectOrTheWorldIsRefused, ()) {
  const TopologyDraw d = *genTopologyDraw();
  const Topology topology = simulatedTopology(d);
  sim::SimOptions options;
  options.seed = sim::deriveSeed(d.seed, 1);
  options.topology = topology;
  const bool connected = checkConnected(topology).isOk();
  RC_CLASSIFY(connected, "connected");
  RC_CLASSIFY(!d.mask.empty(), "masked");

  auto world = makeSimTestWorld(d.world_size, options, maskedConfig(d, Algorithm::kAuto));
  if (!connected) {
    // Every rank's creation fails the same way, naming the ranks that cannot be reached.
    RC_ASSERT(!world.isOk());
    RC_ASSERT(world.status().code() == ErrorCode::kUnavailable);
    RC_ASSERT(contains(world.status().message(), unreachableRanks(topology) + " cannot be reached"));
    return;
  }
  RC_ASSERT(world.status().toString() == "ok");

  AllreduceCase c;
  c.world_size = d.world_size;
  // Large counts (segments through relays) on up to 8 ranks; beyond that the cheap counts keep CI fast.
  c.count = d.world_size <= 8 ? *genCount(d.world_size) : *genSmallCount(d.world_size);
  c.dtype = *genDataType();
  c.op = *genReduceOp();
  c.in_place = *rc::gen::arbitrary<bool>();
  c.send_offset = *uniform(rc::gen::inRange<std::size_t>(0, 8));
  c.recv_offset = *uniform(rc::gen::inRange<std::size_t>(0, 8));
  c.seed = *uniform(rc::gen::arbitrary<std::uint64_t>());

  // The algorithms the selector may pick here, each forced in turn on a fresh world.
  auto report = (*world)->comm(0).explainSelection(c.count, c.dtype);
  RC_ASSERT(report.isOk());
  std::set<Algorithm> pickable;
  for (const auto& candidate : report->candidates) pickable.insert(candidate.algorithm);
  RC_ASSERT(!pickable.empty());
  RC_ASSERT(pickable.count(report->chosen) == 1);
  std::uint64_t expected_hash = 0;
  for (Algorithm algorithm : pickable) {
    RC_TAG(algorithmName(algorithm));
    auto forced = makeSimTestWorld(d.world_size, options, maskedConfig(d, algorithm));
    RC_ASSERT(forced.status().toString() == "ok");
    AllreduceCase forced_case = c;
    forced_case.algorithm = algorithm;
    const CaseOutcome outcome = runAllreduceCase(**forced, forced_case);
    RC_ASSERT(outcome.problem == "");
    // Integers reduce exactly whatever the order: every algorithm must give the same bits.
    if (!isFloatingPoint(c.dtype) && c.op != ReduceOp::kAvg) {
      if (expected_hash == 0) expected_hash = outcome.result_hash;
      RC_ASSERT(outcome.result_hash == expected_hash);
    }
  }
}

// The link mask on whatever world the provider gives: simulated full meshes here, and the real GPUs
// (fully connected) under mpirun, so the same partial-connectivity scenarios run on both. A mask that
// disconnects the world is refused on every rank; otherwise the automatic choice and one forced
// pickable algorithm give the reference result with identical bits on every rank.
RC_GTEST_PROP(TopologyProperty, MaskedWorldIsCorrectOrRefusedOnEveryRank, ()) {
  const int n = std::max(2, *genSmallWorldSize());
  const int fraction = *uniform(rc::gen::inRange(0, 80));
  const std::string mask = randomMask(n, fraction / 100.0, *uniform(rc::gen::arbitrary<std::uint64_t>()));
  auto masked = applyLinkMask(Topology::fullMesh(n), mask);
  RC_ASSERT(masked.isOk());
  const bool connected = checkConnected(*masked).isOk();
  RC_CLASSIFY(connected, "connected");
  TopologyDraw d;
  d.world_size = n;
  d.mask = mask;
  const std::uint64_t sim_seed = *uniform(rc::gen::arbitrary<std::uint64_t>());
  auto world = worldProvider().acquire(n, maskedConfig(d, Algorithm::kAuto), sim_seed);
  if (!connected) {
    // The machine is connected; the mask cut it apart: the setting is wrong.
    RC_ASSERT(!world.isOk());
    RC_ASSERT(world.status().code() == ErrorCode::kInvalidArgument);
    RC_ASSERT(contains(world.status().message(), unreachableRanks(*masked) + " cannot be reached"));
    RC_ASSERT(contains(world.status().message(), "(PEERREDUCE_LINK_MASK) disconnects a connected world"));
    return;
  }
  RC_ASSERT(world.status().toString() == "ok");
  AllreduceCase c;
  c.world_size = n;
  c.count = *genSmallCount(n);
  c.dtype = *genDataType();
  c.op = *genReduceOp();
  c.in_place = *rc::gen::arbitrary<bool>();
  c.seed = *uniform(rc::gen::arbitrary<std::uint64_t>());
  RC_ASSERT(runAllreduceCase(**world, c).problem == "");

  auto report = (*world)->comm((*world)->localRanks().front()).explainSelection(c.count, c.dtype);
  RC_ASSERT(report.isOk());
  std::vector<Algorithm> pickable;
  for (const auto& candidate : report->candidates) pickable.push_back(candidate.algorithm);
  const Algorithm forced = *rc::gen::elementOf(pickable);
  RC_TAG(algorithmName(forced));
  auto forced_world = worldProvider().acquire(n, maskedConfig(d, forced), sim_seed);
  RC_ASSERT(forced_world.status().toString() == "ok");
  c.algorithm = forced;
  RC_ASSERT(runAllreduceCase(**forced_world, c).problem == "");
}

// An algorithm that the topology cannot carry, forced, is a typed error at creation, not a hang.
RC_GTEST_PROP(TopologyProperty, ImpossibleForcedAlgorithmIsATypedError, ()) {
  const int n = *uniform(rc::gen::inRange(4, 12));  // a ring of 3 is a full mesh
  sim::SimOptions options;
  options.topology = ringTopology(n);
  const Algorithm algorithm =
      *uniform(rc::gen::element(Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRecursiveDoubling,
                                Algorithm::kRabenseifner, Algorithm::kCopyEngineTwoShot));
  Config config;
  config.algorithm = algorithm;
  auto world = makeSimTestWorld(n, options, config);
  RC_ASSERT(!world.isOk());
  RC_ASSERT(world.status().code() == ErrorCode::kInvalidArgument);
  RC_ASSERT(contains(world.status().message(), std::string(algorithmName(algorithm))));
}

}  // namespace
}  // namespace peerreduce::testing
