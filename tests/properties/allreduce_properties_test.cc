// Properties of the allreduce as a whole, on simulated worlds of random size.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "generators.h"
#include "sim/prng.h"

namespace peerreduce::testing {
namespace {

// Small scratch so that large counts take the segmented path too.
constexpr std::size_t kAllreducePropertiesTestScratchBytes = std::size_t{1} << 20;
// A pool just large enough for the scratch: every case maps a fresh region per rank, and the default
// 64 MiB per rank would make world creation, not the allreduce, the cost of a case.
constexpr std::size_t kAllreducePropertiesTestPoolBytes = std::size_t{4} << 20;

Config configFor(Algorithm algorithm) {
  Config config;
  config.algorithm = algorithm;
  config.scratch_bytes = kAllreducePropertiesTestScratchBytes;
  config.memory.pool_bytes = kAllreducePropertiesTestPoolBytes;
  return config;
}

// A simulated world (fresh, scheduled by `sim_seed`), or on hardware the GPU world for this config.
std::shared_ptr<TestWorld> makeWorld(int size, Algorithm algorithm, std::uint64_t sim_seed) {
  auto world = worldProvider().acquire(size, configFor(algorithm), sim_seed);
  RC_ASSERT(world.status().toString() == "ok");
  return std::move(world).value();
}

// The main property: any world, count, dtype, op, algorithm, placement and seed gives the reference
// result, identical bits on every rank, untouched memory around the buffers and no race.
RC_GTEST_PROP(AllreduceProperty, MatchesReferenceOnEveryRank, ()) {
  const AllreduceCase c = *genAllreduceCase();
  RC_CLASSIFY(c.world_size == 1, "1 rank");
  RC_CLASSIFY(c.count == 0, "count 0");
  RC_TAG(algorithmName(c.algorithm));
  auto world = makeWorld(c.world_size, c.algorithm, sim::deriveSeed(c.seed, 1));
  const CaseOutcome outcome = runAllreduceCase(*world, c);
  RC_ASSERT(outcome.problem == "");
}

// The same property over the cheap part of the space (worlds of 1..16 ranks, counts below 4096), so
// one CI run covers it with many thousands of cases.
RC_GTEST_PROP(AllreduceProperty, SmallCasesMatchReferenceOnEveryRank, ()) {
  const AllreduceCase c = *genAllreduceCase(/*small=*/true);
  RC_TAG(algorithmName(c.algorithm));
  auto world = makeWorld(c.world_size, c.algorithm, sim::deriveSeed(c.seed, 1));
  const CaseOutcome outcome = runAllreduceCase(*world, c);
  RC_ASSERT(outcome.problem == "");
}

// avg is NCCL's premultiplied sum (types.h): the average of finite inputs near MAX, whose sums overflow,
// is finite on every algorithm (the relay tree too) and matches the reference, in every float dtype.
// Summing first and dividing at the end fails this (tests/unit/canary_test.cc shows it is caught).
RC_GTEST_PROP(AllreduceProperty, LargeInputsAverageToAFiniteReferenceResultOnEveryAlgorithm, ()) {
  AllreduceCase c = *genAllreduceCase(/*small=*/true);
  c.op = ReduceOp::kAvg;
  c.dtype = *genFloatDataType();
  c.algorithm = *genAnyAlgorithm();
  c.payload = Payload::kLarge;
  RC_TAG(algorithmName(c.algorithm));
  RC_TAG(dataTypeName(c.dtype));
  auto world = makeWorld(c.world_size, c.algorithm, sim::deriveSeed(c.seed, 1));
  const CaseOutcome outcome = runAllreduceCase(*world, c);
  RC_ASSERT(outcome.problem == "");
}

// Rerunning a seed reproduces the schedule exactly (same trace fingerprint) and the same bits; a
// different scheduler seed still gives the same bits, because the plan fixes the reduction order.
RC_GTEST_PROP(AllreduceProperty, SameSeedSameScheduleAndBits, ()) {
  AllreduceCase c = *genAllreduceCase();
  c.count = *rc::gen::inRange<std::size_t>(1, 3000);
  const std::uint64_t sim_seed = *rc::gen::arbitrary<std::uint64_t>();
  auto first = makeWorld(c.world_size, c.algorithm, sim_seed);
  const CaseOutcome a = runAllreduceCase(*first, c);
  RC_ASSERT(a.problem == "");
  auto again = makeWorld(c.world_size, c.algorithm, sim_seed);
  const CaseOutcome b = runAllreduceCase(*again, c);
  RC_ASSERT(b.problem == "");
  RC_ASSERT(a.result_hash == b.result_hash);
  // The schedule itself is the simulator's; GPUs have no reproducible interleaving to compare.
  if (first->simWorld() != nullptr) {
    RC_ASSERT(first->simWorld()->traceFingerprint() == again->simWorld()->traceFingerprint());
  }
  auto other = makeWorld(c.world_size, c.algorithm, sim_seed + 1);
  const CaseOutcome d = runAllreduceCase(*other, c);
  RC_ASSERT(d.problem == "");
  RC_ASSERT(a.result_hash == d.result_hash);
}

// Several operations enqueued back to back before any completes, mixing sizes (hence algorithms),
// dtypes and placements on one set of communicators: the entry fence must keep them apart.
RC_GTEST_PROP(AllreduceProperty, BackToBackOperationsStayCorrect, ()) {
  const int world_size = *genWorldSize();
  auto world = makeWorld(world_size, Algorithm::kAuto, *rc::gen::arbitrary<std::uint64_t>());
  const int operations = *rc::gen::inRange(2, 6);
  std::vector<AllreduceCase> cases;
  for (int i = 0; i < operations; ++i) {
    AllreduceCase c;
    c.world_size = world_size;
    c.count = *genCount(world_size);
    c.dtype = *genDataType();
    c.op = *genReduceOp();
    c.in_place = *rc::gen::arbitrary<bool>();
    c.send_offset = *rc::gen::inRange<std::size_t>(0, 8);
    c.recv_offset = *rc::gen::inRange<std::size_t>(0, 8);
    c.seed = *rc::gen::arbitrary<std::uint64_t>();
    cases.push_back(c);
  }
  for (const CaseOutcome& outcome : runAllreduceCases(*world, cases)) RC_ASSERT(outcome.problem == "");
}

}  // namespace
}  // namespace peerreduce::testing
