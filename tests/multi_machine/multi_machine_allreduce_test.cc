// The allreduce across machines on the simulator: both strategies, counts the machine's ranks do not
// divide, interleaved placement, in place, the cost model's choice, and the refusals.
#include <gtest/gtest.h>

#include "multi_machine_case.h"
#include "rank_threads.h"

namespace peerreduce::testing {
namespace {

TEST(MultiMachineAllreduce, HierarchicalAndFlatMatchTheReferenceWithUnevenCountsBackToBack) {
  // One world runs every case in turn: counts below, at and past the machine's 4 ranks, shares with and
  // without a tail, both strategies interleaved on the same communicators.
  MultiMachineCase c{.machines = 3, .ranks_per_machine = 4};
  auto cluster = makeCluster(c);
  ASSERT_NE(cluster, nullptr);
  for (std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{1000}, std::size_t{4099}}) {
    for (MachineStrategy strategy : {MachineStrategy::kHierarchical, MachineStrategy::kFlat}) {
      c.count = count;
      c.strategy = strategy;
      c.seed = count;
      EXPECT_EQ(runMultiMachineCase(*cluster, c).problem, "") << machineStrategyName(strategy) << " count " << count;
    }
  }
}

TEST(MultiMachineAllreduce, InterleavedPlacementInPlaceIntegersAreExact) {
  MultiMachineCase c{.machines = 2,
                     .ranks_per_machine = 3,
                     .count = 257,
                     .dtype = DataType::kInt32,
                     .op = ReduceOp::kSum,
                     .interleaved = true,
                     .in_place = true};
  auto cluster = makeCluster(c);
  ASSERT_NE(cluster, nullptr);
  EXPECT_EQ(cluster->comm(1).layout().machine, 1);
  EXPECT_EQ(cluster->comm(1).layout().local_rank, 0);
  EXPECT_EQ(runMultiMachineCase(*cluster, c).problem, "");
}

TEST(MultiMachineAllreduce, FloatingAverageIsWithinTheReference) {
  MultiMachineCase c{.machines = 2,
                     .ranks_per_machine = 4,
                     .count = 999,
                     .dtype = DataType::kFloat32,
                     .op = ReduceOp::kAvg,
                     .strategy = MachineStrategy::kHierarchical};
  auto cluster = makeCluster(c);
  ASSERT_NE(cluster, nullptr);
  EXPECT_EQ(runMultiMachineCase(*cluster, c).problem, "");
}

TEST(MultiMachineAllreduce, IntegerAverageAndAnUnknownStrategyAreRefusedSayingWhy) {
  MultiMachineCase c{.machines = 2, .ranks_per_machine = 2};
  auto cluster = makeCluster(c);
  ASSERT_NE(cluster, nullptr);
  std::vector<int> data(4, 1);
  const Status s = cluster->comm(0).allreduce(data.data(), data.data(), 4, DataType::kInt32, ReduceOp::kAvg);
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.message().find("whole sum once"), std::string::npos) << s.message();
  const Status unknown = cluster->comm(0).allreduce(data.data(), data.data(), 4, DataType::kInt32, ReduceOp::kSum,
                                                    nullptr, static_cast<MachineStrategy>(7));
  EXPECT_EQ(unknown.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("unknown strategy 7"), std::string::npos) << unknown.message();
}

TEST(MultiMachineAllreduce, SmallMessagesGoFlatLargeOnesHierarchical) {
  // 4 machines x 4 ranks on the default 400 Gb/s network: a few bytes pay phases, not bandwidth, and
  // the flat way has one phase fewer; many megabytes pay the network's bandwidth, and the split sends
  // a quarter of them through each NIC.
  MultiMachineCase c{.machines = 4, .ranks_per_machine = 4};
  auto cluster = makeCluster(c);
  ASSERT_NE(cluster, nullptr);
  auto small = cluster->comm(5).explainSelection(16, DataType::kFloat32);
  auto large = cluster->comm(5).explainSelection(std::size_t{16} << 20, DataType::kFloat32);
  ASSERT_TRUE(small.isOk() && large.isOk());
  EXPECT_EQ(small->chosen, MachineStrategy::kFlat) << small->flat_us << " vs " << small->hierarchical_us;
  EXPECT_LT(small->flat_us, small->hierarchical_us);
  EXPECT_EQ(large->chosen, MachineStrategy::kHierarchical) << large->flat_us << " vs " << large->hierarchical_us;
  EXPECT_LT(large->hierarchical_us, large->flat_us / 2);
  EXPECT_FALSE(large->network_allreduce.empty());
  EXPECT_FALSE(large->machine_reduce_scatter.empty());
}

// The simulator prices each step as the cost model does, so one operation's simulated time is the
// prediction, except for one thing the composition adds: each world keeps its own clock, so the
// machine's all-gather waits (one machine link latency, 1 us here) for the reduce-scatter's done signals,
// which on real machines arrive while the network step runs.
TEST(MultiMachineAllreduce, SimulatedTimeOfOneOperationIsThePrediction) {
  for (MachineStrategy strategy : {MachineStrategy::kHierarchical, MachineStrategy::kFlat}) {
    MultiMachineCase c{.machines = 2, .ranks_per_machine = 4, .count = 1 << 16, .strategy = strategy};
    auto cluster = makeCluster(c);
    ASSERT_NE(cluster, nullptr);
    auto predicted = cluster->comm(0).explainSelection(c.count, c.dtype);
    ASSERT_TRUE(predicted.isOk());
    ASSERT_EQ(runMultiMachineCase(*cluster, c).problem, "");
    const double expected =
        strategy == MachineStrategy::kHierarchical ? predicted->hierarchical_us : predicted->flat_us;
    const double fence = strategy == MachineStrategy::kHierarchical ? Topology::defaultNvLink().latency_us : 0.0;
    EXPECT_NEAR(cluster->world().virtualTimeUs(), expected + fence, 1e-6 * expected) << machineStrategyName(strategy);
  }
}

TEST(MultiMachineAllreduce, UnequalMachinesFailCreationOnEveryRank) {
  auto world = sim::MultiMachineSimWorld::create({.machines = 2, .ranks_per_machine = 2});
  ASSERT_TRUE(world.isOk());
  // Ranks 0-2 claim machine-0 and rank 3 machine-1: 3 ranks and 1.
  std::vector<Status> errors(4);
  sim::runOnRankThreads(4, [&](int r) {
    errors[static_cast<std::size_t>(r)] =
        MultiMachineCommunicator::create(r, 4, (*world)->worldBootstrap(r), (*world)->linksFactory(), {},
                                         r < 3 ? "machine-0" : "machine-1")
            .status();
  });
  for (const Status& s : errors) {
    EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
    EXPECT_NE(s.message().find("machine-0 has 3, machine-1 has 1"), std::string::npos) << s.message();
  }
}

TEST(MultiMachineAllreduce, AFactoryErrorFailsEveryRankNamingIt) {
  auto world = sim::MultiMachineSimWorld::create({.machines = 2, .ranks_per_machine = 1});
  ASSERT_TRUE(world.isOk());
  const MachineLinksFactory good = (*world)->linksFactory();
  const MachineLinksFactory flaky = [&](const MachineLayout& layout) -> StatusOr<MachineLinks> {
    if (layout.rank == 1) return unavailableError("no NIC on this machine");
    return good(layout);
  };
  std::vector<Status> errors(2);
  sim::runOnRankThreads(2, [&](int r) {
    errors[static_cast<std::size_t>(r)] =
        MultiMachineCommunicator::create(r, 2, (*world)->worldBootstrap(r), flaky, {}, (*world)->hostIdentity(r))
            .status();
  });
  EXPECT_NE(errors[1].message().find("no NIC"), std::string::npos) << errors[1].toString();
  EXPECT_EQ(errors[0].code(), ErrorCode::kUnavailable);
  EXPECT_NE(errors[0].message().find("rank 1"), std::string::npos) << errors[0].toString();
}

}  // namespace
}  // namespace peerreduce::testing

namespace peerreduce::testing {
namespace {

TEST(MultiMachineAllreduce, AfterAbortEveryCallIsAborted) {
  MultiMachineCase c{.machines = 1, .ranks_per_machine = 1};
  auto cluster = makeCluster(c);
  ASSERT_NE(cluster, nullptr);
  cluster->comm(0).abort();
  std::vector<float> data(8, 1.0f);
  const Status s = cluster->comm(0).allreduce(data.data(), data.data(), 8, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(s.code(), ErrorCode::kAborted) << s.toString();
  EXPECT_EQ(cluster->comm(0).broadcast(data.data(), data.data(), 8, DataType::kFloat32, 0).code(), ErrorCode::kAborted);
}

}  // namespace
}  // namespace peerreduce::testing
