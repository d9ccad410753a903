// Grouping ranks by machine (api/machine_layout.h) and the network's description (topology/machines.h).
#include "api/machine_layout.h"

#include <gtest/gtest.h>

#include "peerreduce/multi_machine_sim.h"
#include "topology/machines.h"
#include "topology/topology_file.h"

namespace peerreduce {
namespace {

TEST(MachineLayout, GroupsRanksByIdentityInOrderOfTheirLowestRank) {
  // Machines interleaved: ranks 0, 2, 4 on "b", 1, 3, 5 on "a"; "b" is machine 0 (rank 0 is there).
  const std::vector<std::string> ids = {"b", "a", "b", "a", "b", "a"};
  auto layout = machineLayoutOf(ids, 3);
  ASSERT_TRUE(layout.isOk()) << layout.status().toString();
  EXPECT_EQ(layout->machines, 2);
  EXPECT_EQ(layout->ranks_per_machine, 3);
  EXPECT_EQ(layout->machine_names, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(layout->machine_of_rank, (std::vector<int>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(layout->local_rank_of_rank, (std::vector<int>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(layout->machine, 1);
  EXPECT_EQ(layout->local_rank, 1);
  EXPECT_EQ(layout->worldRank(1, 2), 5);
  EXPECT_EQ(layout->worldRank(0, 1), 2);
}

TEST(MachineLayout, UnequalMachinesAreRefusedNamingEachMachineAndItsCount) {
  const std::vector<std::string> ids = {"node-a", "node-a", "node-a", "node-b"};
  auto layout = machineLayoutOf(ids, 0);
  ASSERT_FALSE(layout.isOk());
  EXPECT_EQ(layout.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(layout.status().message().find("node-a has 3"), std::string::npos) << layout.status().message();
  EXPECT_NE(layout.status().message().find("node-b has 1"), std::string::npos) << layout.status().message();
}

TEST(MachineLayout, RankOutsideTheWorldIsRefused) {
  EXPECT_EQ(machineLayoutOf({"a", "a"}, 2).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(machineLayoutOf({}, 0).status().code(), ErrorCode::kInvalidArgument);
}

TEST(NetworkSpec, ParsesRateAndLatency) {
  auto plain = parseNetworkSpec("400");
  ASSERT_TRUE(plain.isOk());
  EXPECT_EQ(plain->link_class, LinkClass::kNetwork);
  EXPECT_DOUBLE_EQ(plain->bandwidth_gbps, 50.0);
  EXPECT_DOUBLE_EQ(plain->latency_us, kDefaultNetworkLatencyUs);
  auto both = parseNetworkSpec("200g:3us");
  ASSERT_TRUE(both.isOk());
  EXPECT_DOUBLE_EQ(both->bandwidth_gbps, 25.0);
  EXPECT_DOUBLE_EQ(both->latency_us, 3.0);
  for (const char* bad : {"", "fast", "0", "400:", "400:-1", "400:x", "1e9"}) {
    auto parsed = parseNetworkSpec(bad);
    ASSERT_FALSE(parsed.isOk()) << bad;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("GBIT[:LATENCY_US]"), std::string::npos);
  }
}

TEST(NetworkTopology, OneNicPerRankAndTheClassRoundTripsThroughTopologyFiles) {
  const Topology t = networkTopology(3, networkLink(400, 5));
  EXPECT_EQ(t.link(0, 2).link_class, LinkClass::kNetwork);
  EXPECT_DOUBLE_EQ(t.device().ingress_bandwidth_gbps, 50.0);
  EXPECT_EQ(linkClassName(LinkClass::kNetwork), "network");
  auto parsed = parseTopologyText(formatTopology(t));
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(*parsed, t);
}

TEST(MultiMachineSimWorld, RefusesBadShapesNamingTheField) {
  sim::MultiMachineSimOptions o;
  o.machines = 0;
  EXPECT_NE(sim::MultiMachineSimWorld::create(o).status().message().find("machines"), std::string::npos);
  o.machines = 16;
  o.ranks_per_machine = 8;
  auto big = sim::MultiMachineSimWorld::create(o);
  EXPECT_EQ(big.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find("128 ranks"), std::string::npos) << big.status().message();
  o.ranks_per_machine = 2;
  o.network.link_class = LinkClass::kNvLink;
  EXPECT_NE(sim::MultiMachineSimWorld::create(o).status().message().find("class network"), std::string::npos);
  o.network = networkLink();
  o.machine_topology = Topology::fullMesh(3);
  EXPECT_NE(sim::MultiMachineSimWorld::create(o).status().message().find("machine topology"), std::string::npos);
}

}  // namespace
}  // namespace peerreduce
