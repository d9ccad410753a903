// Reduce-scatter and all-gather across machines on the simulator: both strategies and both placements,
// in place, integers exact, floating avg, the cost model's choice, reruns with the same bits, the block
// grid of a placement and its refusals, and the refusals of the calls.
#include <gtest/gtest.h>

#include "api/machine_block_grid.h"
#include "api/machine_layout.h"
#include "multi_machine_collective_case.h"

namespace peerreduce::testing {
namespace {

const char* nameOf(Collective collective) { return collective == Collective::kReduceScatter ? "RS" : "AG"; }

TEST(MultiMachineCollectives, BothStrategiesBothPlacementsInAndOutOfPlaceMatchTheReference) {
  for (bool interleaved : {false, true}) {
    MultiMachineCase c{.machines = 3, .ranks_per_machine = 2, .interleaved = interleaved};
    auto cluster = makeCluster(c);
    ASSERT_NE(cluster, nullptr);
    for (Collective collective : {Collective::kReduceScatter, Collective::kAllGather}) {
      for (MachineStrategy strategy : {MachineStrategy::kHierarchical, MachineStrategy::kFlat}) {
        for (bool in_place : {false, true}) {
          c.strategy = strategy;
          c.in_place = in_place;
          c.count = in_place ? 37 : 300;
          c.dtype = in_place ? DataType::kInt32 : DataType::kFloat32;  // integers: exact
          c.seed = c.count + (interleaved ? 7 : 0);
          EXPECT_EQ(runMultiMachineCollectiveCase(*cluster, c, collective).problem, "")
              << nameOf(collective) << " " << machineStrategyName(strategy) << (in_place ? " in place" : "")
              << (interleaved ? " interleaved" : "");
        }
      }
    }
  }
}

TEST(MultiMachineCollectives, FloatingAverageIsWithinTheReferenceAndIntegerAverageIsRefused) {
  MultiMachineCase c{
      .machines = 2, .ranks_per_machine = 2, .count = 100, .dtype = DataType::kBFloat16, .op = ReduceOp::kAvg};
  auto cluster = makeCluster(c);
  ASSERT_NE(cluster, nullptr);
  for (MachineStrategy strategy : {MachineStrategy::kHierarchical, MachineStrategy::kFlat}) {
    c.strategy = strategy;
    EXPECT_EQ(runMultiMachineCollectiveCase(*cluster, c, Collective::kReduceScatter).problem, "")
        << machineStrategyName(strategy);
  }
  std::vector<std::int32_t> data(4 * 4);
  const Status s = cluster->comm(0).reduceScatter(data.data(), data.data(), 4, DataType::kInt32, ReduceOp::kAvg);
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.message().find("avg of int32"), std::string::npos) << s.toString();
}

TEST(MultiMachineCollectives, RerunsAndAnotherScheduleGiveTheSameBits) {
  MultiMachineCase c{.machines = 2, .ranks_per_machine = 3, .count = 513, .dtype = DataType::kFloat16};
  for (MachineStrategy strategy : {MachineStrategy::kHierarchical, MachineStrategy::kFlat}) {
    c.strategy = strategy;
    c.schedule_seed = 1;
    auto cluster = makeCluster(c);
    ASSERT_NE(cluster, nullptr);
    const auto first = runMultiMachineCollectiveCase(*cluster, c, Collective::kReduceScatter);
    ASSERT_EQ(first.problem, "");
    const auto again = runMultiMachineCollectiveCase(*cluster, c, Collective::kReduceScatter);
    EXPECT_EQ(again.result, first.result) << machineStrategyName(strategy);
    c.schedule_seed = 99;  // another interleaving in every world
    auto other = makeCluster(c);
    ASSERT_NE(other, nullptr);
    const auto reordered = runMultiMachineCollectiveCase(*other, c, Collective::kReduceScatter);
    EXPECT_EQ(reordered.problem, "");
    EXPECT_EQ(reordered.result, first.result) << machineStrategyName(strategy);
  }
}

TEST(MultiMachineCollectives, TheCostModelPicksFlatForSmallAndHierarchicalForLargeOnEveryRank) {
  MultiMachineCase c{.machines = 2, .ranks_per_machine = 4};
  auto cluster = makeCluster(c);
  ASSERT_NE(cluster, nullptr);
  for (Collective collective : {Collective::kReduceScatter, Collective::kAllGather}) {
    std::vector<MachineSelection> small(8), large(8);
    const std::vector<Status> statuses = cluster->run([&](MultiMachineCommunicator& comm, int r) {
      auto a = comm.explainSelection(collective, 16, DataType::kFloat32);
      auto b = comm.explainSelection(collective, std::size_t{8} << 20, DataType::kFloat32);
      if (!a.isOk()) return a.status();
      if (!b.isOk()) return b.status();
      small[static_cast<std::size_t>(r)] = *a;
      large[static_cast<std::size_t>(r)] = *b;
      return Status::ok();
    });
    for (const Status& s : statuses) ASSERT_TRUE(s.isOk()) << s.toString();
    for (int r = 0; r < 8; ++r) {
      EXPECT_EQ(small[static_cast<std::size_t>(r)].chosen, MachineStrategy::kFlat) << nameOf(collective) << r;
      EXPECT_EQ(large[static_cast<std::size_t>(r)].chosen, MachineStrategy::kHierarchical) << nameOf(collective) << r;
    }
    EXPECT_LT(small[0].flat_us, small[0].hierarchical_us);
    EXPECT_LT(large[0].hierarchical_us, large[0].flat_us);
    EXPECT_NE(large[0].hierarchical_plans.find("x 2 (one per machine's blocks)"), std::string::npos)
        << large[0].hierarchical_plans;
  }
  const auto broadcast = cluster->comm(0).explainSelection(Collective::kBroadcast, 16, DataType::kFloat32);
  EXPECT_EQ(broadcast.status().code(), ErrorCode::kInvalidArgument);
}

TEST(MultiMachineCollectives, BadArgumentsAreRefusedNamingThem) {
  MultiMachineCase c{.machines = 2, .ranks_per_machine = 1};
  auto cluster = makeCluster(c);
  ASSERT_NE(cluster, nullptr);
  std::vector<float> data(8);
  const Status null_send = cluster->comm(0).reduceScatter(nullptr, data.data(), 2, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(null_send.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(null_send.message().find("send buffer is null"), std::string::npos) << null_send.toString();
  const Status overlap = cluster->comm(0).allGather(data.data() + 1, data.data(), 2, DataType::kFloat32);
  EXPECT_EQ(overlap.code(), ErrorCode::kInvalidArgument) << overlap.toString();
  const Status strategy = cluster->comm(0).allGather(data.data(), data.data() + 4, 2, DataType::kFloat32, nullptr,
                                                     static_cast<MachineStrategy>(7));
  EXPECT_EQ(strategy.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(strategy.message().find("unknown strategy 7"), std::string::npos) << strategy.toString();
}

TEST(MachineBlockGrid, MachineByMachineAndRoundRobinPlacementsAreGridsAndOthersAreRefused) {
  auto ordered = machineLayoutOf({"a", "a", "a", "b", "b", "b"}, 0);
  ASSERT_TRUE(ordered.isOk());
  auto grid = machineBlockGrid(*ordered);
  ASSERT_TRUE(grid.isOk()) << grid.status().toString();
  EXPECT_TRUE(grid->rows_contiguous);
  EXPECT_EQ(grid->row_start, (std::vector<std::size_t>{0, 3}));
  EXPECT_EQ(grid->column_step, (std::vector<std::size_t>{3, 3, 3}));

  auto round_robin = machineLayoutOf({"a", "b", "a", "b", "a", "b"}, 0);
  ASSERT_TRUE(round_robin.isOk());
  grid = machineBlockGrid(*round_robin);
  ASSERT_TRUE(grid.isOk()) << grid.status().toString();
  EXPECT_FALSE(grid->rows_contiguous);
  EXPECT_EQ(grid->row_step, (std::vector<std::size_t>{2, 2}));
  EXPECT_EQ(grid->column_start, (std::vector<std::size_t>{0, 2, 4}));
  EXPECT_EQ(grid->column_step, (std::vector<std::size_t>{1, 1, 1}));

  auto uneven = machineLayoutOf({"a", "a", "b", "b", "b", "a"}, 0);  // machine a: ranks 0, 1, 5
  ASSERT_TRUE(uneven.isOk());
  grid = machineBlockGrid(*uneven);
  EXPECT_EQ(grid.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(grid.status().message().find("machine 'a' (0, 1, 5)"), std::string::npos) << grid.status().toString();

  auto crossed = machineLayoutOf({"a", "b", "b", "a"}, 0);  // local rank 1: world ranks 3 then 2
  ASSERT_TRUE(crossed.isOk());
  grid = machineBlockGrid(*crossed);
  EXPECT_EQ(grid.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(grid.status().message().find("local rank 1 of every machine (world ranks 3, 2)"), std::string::npos)
      << grid.status().toString();
}

}  // namespace
}  // namespace peerreduce::testing
