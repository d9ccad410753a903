// Host-staged entries of the link mask (topology/link_mask.h, grammar util/link_mask_syntax.h): pairs
// named host:A-B, or every pair with host:all, become host-staged in both directions, mixed with the
// removals of A-B entries; malformed entries and contradictions are refused naming the entry.
#include "topology/link_mask.h"

#include <gtest/gtest.h>

#include <string>

#include "text_contains.h"
#include "topology/device_profiles.h"
#include "topology/generators.h"
#include "topology/routes.h"
#include "util/link_mask_syntax.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

TEST(LinkMaskSyntax, ParsesEveryFormInOrder) {
  auto entries = parseLinkMaskSyntax("0-1,host:2-3,host:all");
  ASSERT_TRUE(entries.isOk()) << entries.status().toString();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].kind, LinkMaskEntry::Kind::kRemove);
  EXPECT_EQ((*entries)[1].kind, LinkMaskEntry::Kind::kHostStaged);
  EXPECT_EQ((*entries)[1].a, 2);
  EXPECT_EQ((*entries)[1].b, 3);
  EXPECT_EQ((*entries)[1].text, "host:2-3");
  EXPECT_EQ((*entries)[2].kind, LinkMaskEntry::Kind::kHostStagedAll);
  EXPECT_TRUE(parseLinkMaskSyntax("")->empty());
}

TEST(LinkMaskSyntax, MalformedEntriesAreNamed) {
  const struct {
    const char* mask;
    const char* says;
  } cases[] = {
      {"host:", "link mask entry 'host:' is not A-B, host:A-B or host:all"},
      {"host:0", "link mask entry 'host:0' is not A-B, host:A-B or host:all"},
      {"host:any", "link mask entry 'host:any' is not A-B, host:A-B or host:all"},
      {"HOST:0-1", "link mask entry 'HOST:0-1'"},
      {"host:all:1", "link mask entry 'host:all:1'"},
      {"host:1-1", "link mask entry 'host:1-1' names one rank twice"},
      {"0-1,host:x-2", "link mask entry 'host:x-2': link mask rank 'x' is not a whole number"},
      {"host:0-64", "link mask entry 'host:0-64': link mask rank 64 is outside 0..63"},
      {"0-1;2", "link mask entry '0-1;2'"},
  };
  for (const auto& c : cases) {
    auto entries = parseLinkMaskSyntax(c.mask);
    ASSERT_FALSE(entries.isOk()) << c.mask;
    EXPECT_EQ(entries.status().code(), ErrorCode::kInvalidArgument) << c.mask;
    EXPECT_TRUE(contains(entries.status().message(), c.says)) << c.mask << ": " << entries.status().message();
  }
  // A long malformed entry is shown cut short, not repeated whole.
  const auto long_entry = parseLinkMaskSyntax(std::string(1000, '7'));
  ASSERT_FALSE(long_entry.isOk());
  EXPECT_LT(long_entry.status().message().size(), 300u) << long_entry.status().message();
}

TEST(LinkMask, HostPairsBecomeHostStagedInBothDirections) {
  const Topology mesh = Topology::fullMesh(4);
  auto masked = applyLinkMask(mesh, "host:0-1,3-2");
  ASSERT_TRUE(masked.isOk()) << masked.status().toString();
  EXPECT_EQ(masked->link(0, 1), defaultHostStagedLink());
  EXPECT_EQ(masked->link(1, 0), defaultHostStagedLink());
  EXPECT_FALSE(masked->canAccess(2, 3));
  EXPECT_EQ(masked->link(0, 2), Topology::defaultNvLink());
}

TEST(LinkMask, HostAllStagesEveryPairExceptRemovedOnesAndConnectsAMachineWithoutPeerAccess) {
  const Topology no_peer_access(4);
  auto masked = applyLinkMask(no_peer_access, "host:all,0-1");
  ASSERT_TRUE(masked.isOk()) << masked.status().toString();
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (a == b) continue;
      const bool removed = (a == 0 && b == 1) || (a == 1 && b == 0);
      EXPECT_EQ(masked->link(a, b).link_class, removed ? LinkClass::kNone : LinkClass::kHostStaged) << a << "->" << b;
    }
  }
  // The machine alone is in pieces; with the mask every rank is reached, so creation may go on.
  EXPECT_EQ(checkConnected(no_peer_access).code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(checkMaskKeepsConnected(no_peer_access, *masked, "host:all,0-1", "--mask").isOk());
  // A mask that leaves such a machine in pieces is still the machine's problem.
  auto partial = applyLinkMask(no_peer_access, "host:0-1");
  ASSERT_TRUE(partial.isOk());
  EXPECT_EQ(checkMaskKeepsConnected(no_peer_access, *partial, "host:0-1", "--mask").code(), ErrorCode::kUnavailable);
}

TEST(LinkMask, HostPairsKeepTheFiguresOfAHostStagedLinkTheTopologyHas) {
  Topology topology = Topology::fullMesh(3);
  const LinkInfo measured{LinkClass::kHostStaged, 5.5, 31.0};
  topology.setBidirectional(0, 1, measured);
  const LinkInfo calibrated{LinkClass::kHostStaged, 6.0, 24.0};
  auto masked = applyLinkMask(topology, "host:all", calibrated);
  ASSERT_TRUE(masked.isOk()) << masked.status().toString();
  EXPECT_EQ(masked->link(0, 1), measured);
  EXPECT_EQ(masked->link(1, 2), calibrated);
  EXPECT_EQ(masked->link(2, 0), calibrated);
  EXPECT_EQ(applyLinkMask(topology, "host:1-2", Topology::defaultNvLink()).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(LinkMask, ContradictionsAndRanksOutsideTheWorldNameTheEntries) {
  const Topology mesh = Topology::fullMesh(4);
  auto clash = applyLinkMask(mesh, "0-1,host:1-0");
  ASSERT_FALSE(clash.isOk());
  EXPECT_TRUE(contains(clash.status().message(), "link mask entries '0-1' and 'host:1-0' both name the pair 0-1"))
      << clash.status().message();
  auto outside = applyLinkMask(mesh, "host:0-5");
  ASSERT_FALSE(outside.isOk());
  EXPECT_EQ(outside.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(outside.status().message(), "link mask rank 5 is outside 0..3 (entry 'host:0-5')"))
      << outside.status().message();
}

TEST(LinkMask, HostStagedFiguresComeFromTheArchitecturesProfileElseTheDefault) {
  EXPECT_EQ(hostStagedLinkFor("simulator"), defaultHostStagedLink());
  for (const DeviceProfile& profile : deviceProfiles()) {
    const LinkInfo expected =
        profile.host_link.link_class == LinkClass::kHostStaged ? profile.host_link : defaultHostStagedLink();
    EXPECT_EQ(hostStagedLinkFor(std::string(profile.architecture)), expected) << profile.name;
  }
}

}  // namespace
}  // namespace peerreduce
