// Partial connectivity: the topology generators (topology/generators.h), the routes over them
// (topology/routes.h), and the plans that follow those routes: a ring over a Hamiltonian cycle and a
// tree over a spanning tree verify using only the links that exist.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "text_contains.h"
#include "topology/generators.h"
#include "topology/routes.h"
#include "verify/verifier.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

// Number of ranks `rank` shares a usable pair with.
int degree(const Topology& topology, int rank) {
  int d = 0;
  for (int other = 0; other < topology.worldSize(); ++other) d += other != rank && usablePair(topology, rank, other);
  return d;
}

// Every link exists in both directions with the same figures.
bool symmetric(const Topology& topology) {
  for (int a = 0; a < topology.worldSize(); ++a) {
    for (int b = 0; b < topology.worldSize(); ++b) {
      if (!(topology.link(a, b) == topology.link(b, a))) return false;
    }
  }
  return true;
}

// A line 0-1-2-...-(n-1): connected, but with no cycle through every rank for n > 2.
Topology lineTopology(int n) {
  Topology topology(n);
  for (int r = 0; r + 1 < n; ++r) topology.setBidirectional(r, r + 1, Topology::defaultNvLink());
  return topology;
}

VerifyOptions linksOf(const Topology& topology) {
  VerifyOptions options;
  options.link = topology.accessMatrix();
  return options;
}

std::string problems(const VerifyReport& report) {
  std::string out;
  for (const auto& p : report.problems) out += p + "\n";
  return out;
}

// ---- generators ---------------------------------------------------------------------------------

TEST(TopologyGenerators, RingLinksEachRankToItsTwoNeighbours) {
  const Topology ring = ringTopology(6);
  EXPECT_TRUE(symmetric(ring));
  for (int r = 0; r < 6; ++r) {
    EXPECT_EQ(degree(ring, r), 2) << r;
    EXPECT_TRUE(ring.canAccess(r, (r + 1) % 6));
  }
  EXPECT_EQ(degree(ringTopology(2), 0), 1);
  EXPECT_EQ(degree(ringTopology(1), 0), 0);
  EXPECT_EQ(ringTopology(4, defaultPcieLink()).link(0, 1).link_class, LinkClass::kPcie);
}

TEST(TopologyGenerators, Mesh2dLinksGridNeighbours) {
  auto mesh = mesh2dTopology(2, 3);  // 0 1 2 / 3 4 5
  ASSERT_TRUE(mesh.isOk()) << mesh.status().toString();
  EXPECT_TRUE(symmetric(*mesh));
  EXPECT_EQ(degree(*mesh, 0), 2);
  EXPECT_EQ(degree(*mesh, 1), 3);
  EXPECT_EQ(degree(*mesh, 4), 3);
  EXPECT_TRUE(mesh->canAccess(1, 4));
  EXPECT_FALSE(mesh->canAccess(0, 4));
  EXPECT_FALSE(mesh->canAccess(2, 3)) << "no wrap-around";
  EXPECT_EQ(mesh2dTopology(1, 1)->worldSize(), 1);
}

TEST(TopologyGenerators, Mesh2dRejectsEmptyAndOversizedGrids) {
  EXPECT_TRUE(contains(mesh2dTopology(0, 4).status().message(), "at least 1 row and 1 column"));
  EXPECT_TRUE(contains(mesh2dTopology(3, -1).status().message(), "at least 1 row and 1 column"));
  auto big = mesh2dTopology(9, 8);
  ASSERT_FALSE(big.isOk());
  EXPECT_TRUE(contains(big.status().message(), "72 ranks; supported sizes are 1..64")) << big.status().message();
}

// Bug: mesh2dTopology multiplied rows by columns in int before checking them, so a large grid overflowed
// (undefined behaviour, an abort under UBSan) instead of being rejected.
TEST(TopologyGenerators, Mesh2dWithHugeDimensionsIsRejectedWithoutOverflow) {
  auto huge = mesh2dTopology(100000, 100000);
  ASSERT_FALSE(huge.isOk());
  EXPECT_EQ(huge.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(huge.status().message(), "10000000000 ranks")) << huge.status().message();
}

TEST(TopologyGenerators, PcieSwitchesAreFastInsideAndHostStagedBetween) {
  auto pcie = pcieSwitchTopology(6, 4);  // switches {0,1,2,3} and {4,5}
  ASSERT_TRUE(pcie.isOk());
  EXPECT_TRUE(symmetric(*pcie));
  EXPECT_EQ(pcie->link(0, 3), defaultPcieLink());
  EXPECT_EQ(pcie->link(4, 5), defaultPcieLink());
  EXPECT_EQ(pcie->link(3, 4), defaultHostStagedLink());
  EXPECT_LT(defaultHostStagedLink().bandwidth_gbps, defaultPcieLink().bandwidth_gbps);
  EXPECT_EQ(pcieSwitchTopology(4, 0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(pcieSwitchTopology(65, 4).status().code(), ErrorCode::kInvalidArgument);
}

TEST(TopologyGenerators, RandomTopologyIsDeterministicPerSeedAndHonoursItsDensity) {
  auto a = randomTopology(16, 0.3, 42);
  auto b = randomTopology(16, 0.3, 42);
  auto c = randomTopology(16, 0.3, 43);
  ASSERT_TRUE(a.isOk() && b.isOk() && c.isOk());
  EXPECT_TRUE(*a == *b);
  EXPECT_FALSE(*a == *c) << "another seed, another topology";
  EXPECT_TRUE(symmetric(*a));
  int linked = 0;
  for (int r = 0; r < 16; ++r) linked += degree(*a, r);
  EXPECT_GT(linked / 2, 10);  // about 0.3 x 120 pairs
  EXPECT_LT(linked / 2, 70);
  EXPECT_TRUE(*randomTopology(8, 1.0, 5) == Topology::fullMesh(8)) << "density 1 links every pair";
  for (double bad : {0.0, -0.5, 1.5}) {
    auto rejected = randomTopology(4, bad, 1);
    ASSERT_FALSE(rejected.isOk()) << bad;
    EXPECT_TRUE(contains(rejected.status().message(), "is outside (0, 1]"));
  }
}

TEST(TopologySpec, EveryFormParses) {
  EXPECT_TRUE(*parseTopologySpec("full-mesh", 5) == Topology::fullMesh(5));
  EXPECT_TRUE(*parseTopologySpec("ring", 5) == ringTopology(5));
  EXPECT_TRUE(*parseTopologySpec("mesh2d:2x4", 8) == *mesh2dTopology(2, 4));
  EXPECT_TRUE(*parseTopologySpec("pcie:2", 6) == *pcieSwitchTopology(6, 2));
  EXPECT_TRUE(*parseTopologySpec("random:0.5:9", 7) == *randomTopology(7, 0.5, 9));
  EXPECT_TRUE(*parseTopologySpec("random:0.5", 7) == *randomTopology(7, 0.5, 1)) << "seed 1 by default";
}

TEST(TopologySpec, BadSpecsNameTheProblemAndListTheForms) {
  const struct {
    const char* spec;
    int world;
    const char* says;
  } cases[] = {
      {"torus", 4, "unknown topology 'torus'; accepted: full-mesh, ring, mesh2d:RxC"},
      {"", 4, "unknown topology ''"},
      {"ring:2", 4, "topology 'ring:2' has the wrong number of ':' parameters"},
      {"full-mesh:1", 4, "wrong number of ':' parameters"},
      {"mesh2d", 4, "wrong number of ':' parameters"},
      {"mesh2d:4", 4, "mesh2d needs RxC, got '4'"},
      {"mesh2d:2x2x1", 4, "mesh2d needs RxC"},
      {"mesh2d:ax2", 4, "mesh2d rows 'a' is not a whole number"},
      {"mesh2d:2x0", 4, "mesh2d columns 0 is outside 1..64"},
      {"mesh2d:2x3", 4, "mesh2d:2x3 has 6 ranks, the world 4"},
      {"pcie", 4, "wrong number of ':' parameters"},
      {"pcie:0", 4, "pcie ranks per switch 0 is outside 1..64"},
      {"random:2", 4, "density 2.000000 is outside (0, 1]"},
      {"random:x", 4, "random topology density 'x'"},
      {"random:0.5:-1", 4, "random topology seed -1 is outside"},
      {"random:0.5:1:2", 4, "wrong number of ':' parameters"},
      {"ring", 0, "topology of 0 ranks; supported sizes are 1..64"},
  };
  for (const auto& c : cases) {
    auto topology = parseTopologySpec(c.spec, c.world);
    ASSERT_FALSE(topology.isOk()) << c.spec;
    EXPECT_EQ(topology.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(topology.status().message(), c.says)) << c.spec << ": " << topology.status().message();
  }
}

TEST(LinkMask, RemovesNamedPairsInBothDirections) {
  const Topology mesh = Topology::fullMesh(4);
  auto masked = applyLinkMask(mesh, "0-1,3-2");
  ASSERT_TRUE(masked.isOk()) << masked.status().toString();
  EXPECT_FALSE(masked->canAccess(0, 1));
  EXPECT_FALSE(masked->canAccess(1, 0));
  EXPECT_FALSE(masked->canAccess(2, 3));
  EXPECT_TRUE(masked->canAccess(0, 2));
  EXPECT_TRUE(mesh.canAccess(0, 1)) << "the input is not changed";
  EXPECT_TRUE(*applyLinkMask(mesh, "") == mesh);
}

TEST(LinkMask, BadEntriesAreNamed) {
  const Topology mesh = Topology::fullMesh(4);
  const struct {
    const char* mask;
    const char* says;
  } cases[] = {
      {"0", "link mask entry '0' is not A-B"},
      {"0-1-2", "link mask entry '0-1-2' is not A-B"},
      {"0-1,", "link mask entry '' is not A-B"},
      {"0-4", "link mask rank 4 is outside 0..3"},
      {"a-1", "link mask rank 'a' is not a whole number"},
      {"2-2", "link mask entry '2-2' names one rank twice"},
  };
  for (const auto& c : cases) {
    auto masked = applyLinkMask(mesh, c.mask);
    ASSERT_FALSE(masked.isOk()) << c.mask;
    EXPECT_TRUE(contains(masked.status().message(), c.says)) << c.mask << ": " << masked.status().message();
  }
}

// ---- routes ------------------------------------------------------------------------------------

TEST(Routes, OneWayLinksDoNotMakeAUsablePair) {
  Topology topology(3);
  topology.setLink(0, 1, Topology::defaultNvLink());
  EXPECT_FALSE(usablePair(topology, 0, 1));
  EXPECT_TRUE(usablePair(topology, 2, 2));
  topology.setLink(1, 0, Topology::defaultNvLink());
  EXPECT_TRUE(usablePair(topology, 1, 0));
  EXPECT_EQ(connectedComponents(topology), (std::vector<std::vector<int>>{{0, 1}, {2}}));
}

TEST(Routes, MaskThatDisconnectsAConnectedWorldIsBadInputNotUnavailable) {
  const Topology mesh = Topology::fullMesh(4);
  auto masked = applyLinkMask(mesh, "0-1,0-2,0-3");
  ASSERT_TRUE(masked.isOk());
  const Status cut = checkMaskKeepsConnected(mesh, *masked, "0-1,0-2,0-3", "--mask");
  EXPECT_EQ(cut.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(cut.message(), "link mask '0-1,0-2,0-3' (--mask) disconnects a connected world"))
      << cut.message();
  EXPECT_TRUE(contains(cut.message(), "ranks 1,2,3 cannot be reached from rank 0")) << cut.message();

  auto harmless = applyLinkMask(mesh, "0-1");
  ASSERT_TRUE(harmless.isOk());
  EXPECT_TRUE(checkMaskKeepsConnected(mesh, *harmless, "0-1", "--mask").isOk());
  // A machine already in pieces is the machine's problem, mask or not.
  auto ring = applyLinkMask(ringTopology(6), "2-3,5-0");
  ASSERT_TRUE(ring.isOk());
  auto more = applyLinkMask(*ring, "0-1");
  ASSERT_TRUE(more.isOk());
  EXPECT_EQ(checkMaskKeepsConnected(*ring, *more, "0-1", "--mask").code(), ErrorCode::kUnavailable);
}

TEST(Routes, DisconnectedWorldsNameTheUnreachableRanks) {
  auto masked = applyLinkMask(ringTopology(6), "2-3,5-0");  // {0,1,2} and {3,4,5}
  ASSERT_TRUE(masked.isOk());
  EXPECT_EQ(connectedComponents(*masked), (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}}));
  const Status status = checkConnected(*masked);
  EXPECT_EQ(status.code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(contains(status.message(), "ranks 3,4,5 cannot be reached from rank 0")) << status.message();
  EXPECT_TRUE(contains(status.message(), "2 disconnected groups")) << status.message();
  auto tree = shallowestSpanningTree(*masked);
  EXPECT_EQ(tree.status().code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(checkConnected(ringTopology(6)).isOk());
}

TEST(Routes, HamiltonianCycleOnSmallAndImpossibleTopologies) {
  EXPECT_EQ(findHamiltonianCycle(Topology(1)), (std::vector<int>{0}));
  EXPECT_EQ(findHamiltonianCycle(Topology::fullMesh(2)), (std::vector<int>{0, 1}));
  EXPECT_EQ(findHamiltonianCycle(Topology(2)), std::nullopt) << "no links at all";
  EXPECT_EQ(findHamiltonianCycle(lineTopology(4)), std::nullopt) << "a line has no cycle";
  EXPECT_EQ(findHamiltonianCycle(ringTopology(5)), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(findHamiltonianCycle(Topology::fullMesh(8), 0), std::nullopt) << "no budget, no search";
}

// A full mesh of slow links with a ring of fast ones through it, numbered so that the search would
// wander onto slow links first if it did not try the fastest class alone before admitting slower ones.
TEST(Routes, HamiltonianCycleUsesOnlyTheFastestLinksWhenTheyFormOne) {
  Topology topology = Topology::fullMesh(6, defaultPcieLink());
  const std::vector<int> fast_ring = {0, 3, 1, 4, 2, 5};
  for (std::size_t i = 0; i < fast_ring.size(); ++i) {
    topology.setBidirectional(fast_ring[i], fast_ring[(i + 1) % fast_ring.size()], Topology::defaultNvLink());
  }
  auto cycle = findHamiltonianCycle(topology);
  ASSERT_TRUE(cycle.has_value());
  for (std::size_t i = 0; i < cycle->size(); ++i) {
    const int a = (*cycle)[i];
    const int b = (*cycle)[(i + 1) % cycle->size()];
    EXPECT_EQ(topology.link(a, b).link_class, LinkClass::kNvLink) << a << "-" << b;
  }
  // When the fast links alone form no cycle, slower ones are admitted.
  auto pcie = pcieSwitchTopology(4, 2);
  ASSERT_TRUE(pcie.isOk());
  EXPECT_TRUE(findHamiltonianCycle(*pcie).has_value());
}

TEST(Routes, ShallowestSpanningTreeIsRootedInTheMiddle) {
  auto line = shallowestSpanningTree(lineTopology(5));
  ASSERT_TRUE(line.isOk());
  EXPECT_EQ(line->root, 2);
  EXPECT_EQ(line->height, 2);
  EXPECT_EQ(line->parent, (std::vector<int>{1, 2, -1, 2, 3}));
  EXPECT_EQ(line->children[2], (std::vector<int>{1, 3}));
  auto star = shallowestSpanningTree(Topology::fullMesh(4));
  ASSERT_TRUE(star.isOk());
  EXPECT_EQ(star->root, 0) << "ties go to the lowest rank";
  EXPECT_EQ(star->height, 1);
  EXPECT_EQ(star->children[0], (std::vector<int>{1, 2, 3}));
}

// Random connected (and some disconnected) topologies: whatever route is found is made of usable
// pairs, and the plans built along it verify with only those links.
RC_GTEST_PROP(RoutesProperty, RingAndTreePlansOverFoundRoutesVerifyOnTheLinksThatExist, ()) {
  const int n = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(1, 11));
  const double density = *rc::gen::resize(rc::kNominalSize, rc::gen::element(0.2, 0.4, 0.7, 1.0));
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const bool in_place = *rc::gen::arbitrary<bool>();
  auto topology = randomTopology(n, density, seed);
  RC_ASSERT(topology.isOk());
  const VerifyOptions options = linksOf(*topology);
  const bool connected = connectedComponents(*topology).size() == 1;

  auto tree = shallowestSpanningTree(*topology);
  RC_ASSERT(tree.isOk() == connected);
  if (tree.isOk()) {
    RC_ASSERT(tree->parent[static_cast<std::size_t>(tree->root)] == -1);
    int deepest = 0;
    for (int r = 0; r < n; ++r) {
      int hops = 0;
      for (int v = r; v != tree->root; v = tree->parent[static_cast<std::size_t>(v)]) {
        RC_ASSERT(usablePair(*topology, v, tree->parent[static_cast<std::size_t>(v)]));
        RC_ASSERT(++hops <= n);
      }
      deepest = std::max(deepest, hops);
    }
    RC_ASSERT(deepest == tree->height);
    const int pipeline = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(1, 4));
    const Plan plan = buildTreePlan(*tree, pipeline, in_place);
    const VerifyReport report = verifyPlan(plan, options);
    RC_ASSERT(problems(report) == "");
  }

  auto cycle = findHamiltonianCycle(*topology);
  if (cycle) {
    RC_ASSERT(static_cast<int>(cycle->size()) == n);
    RC_ASSERT(cycle->front() == 0);
    std::vector<int> sorted = *cycle;
    std::sort(sorted.begin(), sorted.end());
    for (int r = 0; r < n; ++r) RC_ASSERT(sorted[static_cast<std::size_t>(r)] == r);
    for (std::size_t i = 0; i < cycle->size(); ++i) {
      RC_ASSERT(usablePair(*topology, (*cycle)[i], (*cycle)[(i + 1) % cycle->size()]));
    }
    const VerifyReport report = verifyPlan(buildRingPlanOver(*cycle, in_place), options);
    RC_ASSERT(problems(report) == "");
  } else {
    RC_ASSERT(n > 2 || !connected);  // one or two connected ranks always have a cycle
  }
}

}  // namespace
}  // namespace peerreduce
