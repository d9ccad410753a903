// Properties of the allreduce across simulated machines (in-process, CI-cheap): any machines, ranks per
// machine, placement, count, dtype, op and strategy give the reference result with identical bits on
// every rank; another seed (another schedule in every world) gives the same bits. Reduce-scatter and
// all-gather the same way: the reference on every rank and the same bits on a rerun.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "generators.h"
#include "multi_machine_collective_case.h"

namespace peerreduce::testing {
namespace {

rc::Gen<MultiMachineCase> genMultiMachineCase() {
  return rc::gen::exec([] {
    MultiMachineCase c;
    c.machines = *rc::gen::inRange(1, 5);
    c.ranks_per_machine = *rc::gen::inRange(1, 5);
    c.count = *rc::gen::oneOf(rc::gen::inRange<std::size_t>(0, 40), rc::gen::inRange<std::size_t>(40, 5000));
    c.dtype = *genDataType();
    c.op = *genReduceOp();
    if (c.op == ReduceOp::kAvg) c.dtype = *genFloatDataType();  // integer avg is refused (tested apart)
    c.strategy = *rc::gen::element(MachineStrategy::kAuto, MachineStrategy::kHierarchical, MachineStrategy::kFlat);
    c.interleaved = *rc::gen::arbitrary<bool>();
    c.in_place = *rc::gen::arbitrary<bool>();
    c.seed = *rc::gen::arbitrary<std::uint64_t>();
    c.schedule_seed = *rc::gen::arbitrary<std::uint64_t>();
    return c;
  });
}

MultiMachineOutcome run(const MultiMachineCase& c) {
  auto cluster = sim::MultiMachineSimCluster::create(optionsOf(c), multiMachineTestConfig());
  RC_ASSERT(cluster.status().toString() == "ok");
  return runMultiMachineCase(**cluster, c);
}

RC_GTEST_PROP(MultiMachineProperty, MatchesReferenceWithIdenticalBitsOnEveryRank, ()) {
  const MultiMachineCase c = *genMultiMachineCase();
  RC_TAG(machineStrategyName(c.strategy));
  RC_ASSERT(run(c).problem == "");
}

RC_GTEST_PROP(MultiMachineProperty, AnotherScheduleGivesTheSameBits, ()) {
  MultiMachineCase c = *genMultiMachineCase();
  const MultiMachineOutcome first = run(c);
  RC_ASSERT(first.problem == "");
  const MultiMachineOutcome again = run(c);
  RC_ASSERT(again.result == first.result);
  RC_ASSERT(again.fingerprint == first.fingerprint);  // the same seed: the same schedule
  c.schedule_seed ^= 0x9E3779B97F4A7C15ull;           // another interleaving in every world, the same inputs
  const MultiMachineOutcome reordered = run(c);
  RC_ASSERT(reordered.problem == "");
  RC_ASSERT(reordered.result == first.result);
}

RC_GTEST_PROP(MultiMachineProperty, CollectivesMatchTheReferenceAndRerunWithTheSameBits, ()) {
  MultiMachineCase c = *genMultiMachineCase();
  c.count = std::min<std::size_t>(c.count, 700);  // per rank: the buffer of every block is N times larger
  const Collective collective = *rc::gen::element(Collective::kReduceScatter, Collective::kAllGather);
  RC_TAG(collectiveName(collective), machineStrategyName(c.strategy));
  auto cluster = sim::MultiMachineSimCluster::create(optionsOf(c), multiMachineTestConfig());
  RC_ASSERT(cluster.status().toString() == "ok");
  const MultiMachineCollectiveOutcome first = runMultiMachineCollectiveCase(**cluster, c, collective);
  RC_ASSERT(first.problem == "");
  const MultiMachineCollectiveOutcome again = runMultiMachineCollectiveCase(**cluster, c, collective);
  RC_ASSERT(again.problem == "");
  RC_ASSERT(again.result == first.result);
}

}  // namespace
}  // namespace peerreduce::testing
