// Topology (peerreduce/topology.h): links are directional, accessMatrix agrees with canAccess, and
// describe() names the link kind of a uniform mesh or lists the missing links.
#include "peerreduce/topology.h"

#include <gtest/gtest.h>

#include <string>

namespace peerreduce {
namespace {

LinkInfo pcie() { return LinkInfo{LinkClass::kPcie, 2.5, 25.0}; }

TEST(LinkClassName, EveryClassHasItsNameAndOthersAreInvalid) {
  EXPECT_EQ(linkClassName(LinkClass::kNone), "none");
  EXPECT_EQ(linkClassName(LinkClass::kNvLink), "nvlink");
  EXPECT_EQ(linkClassName(LinkClass::kXgmi), "xgmi");
  EXPECT_EQ(linkClassName(LinkClass::kPcie), "pcie");
  EXPECT_EQ(linkClassName(LinkClass::kHostStaged), "host");
  EXPECT_EQ(linkClassName(static_cast<LinkClass>(9)), "invalid");
}

TEST(Topology, NewTopologyHasNoLinksButEveryRankReachesItself) {
  const Topology topology(3);
  EXPECT_EQ(topology.worldSize(), 3);
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      EXPECT_FALSE(topology.link(a, b).connected());
      EXPECT_EQ(topology.canAccess(a, b), a == b);
    }
  }
  EXPECT_EQ(topology.describe(), "3 ranks, 6 directed links missing (0-1,0-2,1-0,1-2,2-0,2-1)");
  EXPECT_EQ(Topology().worldSize(), 0);
}

TEST(Topology, FullMeshLinksEveryOrderedPairWithTheGivenLinkAndDevice) {
  DeviceModel device;
  device.step_overhead_us = 3.0;
  const Topology topology = Topology::fullMesh(4, pcie(), device);
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (a == b) {
        EXPECT_FALSE(topology.link(a, b).connected()) << "no self link is stored";
      } else {
        EXPECT_EQ(topology.link(a, b).link_class, LinkClass::kPcie);
        EXPECT_EQ(topology.link(a, b).bandwidth_gbps, 25.0);
      }
      EXPECT_TRUE(topology.canAccess(a, b));
    }
  }
  EXPECT_EQ(topology.device().step_overhead_us, 3.0);
  EXPECT_EQ(topology.describe(), "4 ranks, full mesh of pcie (2.50 us, 25 GB/s)");
}

// hasLinkOf looks at the links between different ranks only, in either direction.
TEST(Topology, HasLinkOfFindsAnyPairOfTheClass) {
  Topology mesh = Topology::fullMesh(3);
  EXPECT_TRUE(mesh.hasLinkOf(LinkClass::kNvLink));
  EXPECT_FALSE(mesh.hasLinkOf(LinkClass::kHostStaged));
  mesh.setLink(2, 1, LinkInfo{LinkClass::kHostStaged, 3.0, 20.0});
  EXPECT_TRUE(mesh.hasLinkOf(LinkClass::kHostStaged));
  EXPECT_FALSE(Topology(4).hasLinkOf(LinkClass::kNvLink)) << "no links at all";
  EXPECT_FALSE(Topology(1).hasLinkOf(LinkClass::kNone)) << "a rank and itself is no pair";
}

TEST(Topology, DefaultNvLinkIsTheSimulatorsDefaultMesh) {
  const LinkInfo link = Topology::defaultNvLink();
  EXPECT_EQ(link.link_class, LinkClass::kNvLink);
  EXPECT_GT(link.bandwidth_gbps, 0.0);
  EXPECT_GT(link.latency_us, 0.0);
  EXPECT_EQ(Topology::fullMesh(2).describe(), "2 ranks, full mesh of nvlink (1.00 us, 150 GB/s)");
}

TEST(Topology, LinksAreDirectional) {
  Topology topology(2);
  topology.setLink(0, 1, pcie());
  EXPECT_TRUE(topology.canAccess(0, 1));
  EXPECT_FALSE(topology.canAccess(1, 0));
  const auto matrix = topology.accessMatrix();
  ASSERT_EQ(matrix.size(), 2u);
  EXPECT_EQ(matrix[0], (std::vector<bool>{true, true}));
  EXPECT_EQ(matrix[1], (std::vector<bool>{false, true}));
  EXPECT_EQ(topology.describe(), "2 ranks, links of pcie (2.50 us, 25 GB/s), 1 directed links missing (1-0)");
  topology.setBidirectional(0, 1, pcie());
  EXPECT_TRUE(topology.canAccess(1, 0));
  topology.setLink(0, 1, LinkInfo{});  // removing a link
  EXPECT_FALSE(topology.canAccess(0, 1));
}

TEST(Topology, AccessMatrixMatchesCanAccessOnAnIrregularTopology) {
  Topology topology(5);
  for (int a = 0; a < 5; ++a) topology.setBidirectional(a, (a + 1) % 5, pcie());  // a ring
  topology.setLink(0, 2, Topology::defaultNvLink());
  const auto matrix = topology.accessMatrix();
  for (int a = 0; a < 5; ++a) {
    for (int b = 0; b < 5; ++b) EXPECT_EQ(matrix[a][b], topology.canAccess(a, b)) << a << "->" << b;
  }
}

TEST(Topology, DescribeSaysWhenLinksDifferAndListsAtMostEightMissing) {
  Topology mixed = Topology::fullMesh(3, pcie());
  mixed.setLink(2, 0, Topology::defaultNvLink());
  EXPECT_EQ(mixed.describe(), "3 ranks, full mesh of pcie (2.50 us, 25 GB/s) and others");

  // A 5-rank ring: 20 ordered pairs, 10 linked, 10 missing; only the first 8 are listed.
  Topology ring(5);
  for (int a = 0; a < 5; ++a) ring.setBidirectional(a, (a + 1) % 5, pcie());
  EXPECT_EQ(
      ring.describe(),
      "5 ranks, links of pcie (2.50 us, 25 GB/s), 10 directed links missing (0-2,0-3,1-3,1-4,2-0,2-4,3-0,3-1,...)");
}

}  // namespace
}  // namespace peerreduce
