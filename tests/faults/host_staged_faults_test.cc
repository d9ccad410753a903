// Faults of host-staged links (lib/faults/faults_host_staged.cc): a dead host-staged path, a stalled copy
// through host memory and pinned memory exhausted in the middle of a run each end in a typed error on a
// world without peer access, and the world goes on (a shrink around the dead path, the pinned memory back
// after healing); injecting them where they cannot strike is a typed error too.
#include <gtest/gtest.h>

#include "faulty_world.h"
#include "text_contains.h"
#include "topology/generators.h"

namespace peerreduce::testing {
namespace {

using faults::Fault;
using faults::FaultKind;

Topology hostStagedMesh(int n) { return Topology::fullMesh(n, defaultHostStagedLink()); }

Config hostStagedConfig() {
  Config config = FaultyWorld::smallConfig();
  config.link_mask = "host:all";
  config.memory.pinned_limit_bytes = std::size_t{1} << 20;
  return config;
}

std::vector<std::vector<std::int32_t>> inputsFor(int n, std::size_t count) {
  std::vector<std::vector<std::int32_t>> in(static_cast<std::size_t>(n), std::vector<std::int32_t>(count));
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < count; ++i) in[static_cast<std::size_t>(r)][i] = r * 7 + static_cast<int>(i % 31);
  }
  return in;
}

std::int32_t sumAt(const std::vector<std::vector<std::int32_t>>& in, std::size_t i) {
  std::int32_t s = 0;
  for (const auto& v : in) s += v[i];
  return s;
}

using peerreduce::testing::contains;

TEST(HostStagedFaults, FaultKindsHaveNamesAndTheirOwnMix) {
  for (FaultKind kind : {FaultKind::kHostLinkDown, FaultKind::kHostCopyStall, FaultKind::kPinnedExhausted}) {
    EXPECT_TRUE(faults::isHostStagedFault(kind));
    auto parsed = faults::parseFaultKind(faults::faultKindName(kind));
    ASSERT_TRUE(parsed.isOk());
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_FALSE(faults::isHostStagedFault(FaultKind::kLinkDown));
  EXPECT_TRUE(faults::isPermanentFault(FaultKind::kHostLinkDown));
  EXPECT_FALSE(faults::isPermanentFault(FaultKind::kPinnedExhausted));
  EXPECT_EQ((Fault{FaultKind::kHostLinkDown, 0, 2, 1, 3, 0.0}.describe()), "host-link-down 0<->2 at op 1 step 3");
  EXPECT_EQ((Fault{FaultKind::kPinnedExhausted, 1, -1, 2, 0, 0.0}.describe()), "pinned-exhausted rank 1 at op 2");
}

TEST(HostStagedFaults, ADeadHostStagedPathFailsStepsOverItAndTheSurvivorsShrinkAroundIt) {
  auto w = FaultyWorld::create(hostStagedMesh(4), hostStagedConfig());
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  const auto inputs = inputsFor(4, 3000);
  const auto hit = (*w)->allreduce(inputs, {Fault{FaultKind::kHostLinkDown, 1, 2, 0, 1, 0.0}});
  bool named = false;
  for (const Status& s : hit.status) {
    if (s.isOk()) continue;
    EXPECT_TRUE(s.code() == ErrorCode::kLinkDown || s.code() == ErrorCode::kTimeout) << s.toString();
    named = named || (s.code() == ErrorCode::kLinkDown && contains(s.message(), "host-staged link"));
  }
  EXPECT_TRUE(named) << "a step over the dead path fails naming the host-staged link";
  std::vector<FailureDecision> decisions;
  for (auto& d : (*w)->abortAndAgree()) {
    ASSERT_TRUE(d.isOk()) << d.status().toString();
    decisions.push_back(*d);
  }
  EXPECT_TRUE(decisions[0].failed.empty());
  auto shrunk = (*w)->shrink(decisions);
  ASSERT_TRUE(shrunk.isOk()) << shrunk.status().toString();
  ASSERT_EQ((*shrunk)->size(), 4);
  EXPECT_FALSE((*shrunk)->comm(0).topology().canAccess(1, 2)) << "the dead path stays out";
  EXPECT_EQ((*shrunk)->comm(0).topology().link(0, 1).link_class, LinkClass::kHostStaged) << "the rest stays staged";
  const auto after = (*shrunk)->allreduce(inputs);
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(after.status[static_cast<std::size_t>(r)].isOk())
        << after.status[static_cast<std::size_t>(r)].toString();
    EXPECT_EQ(after.result[static_cast<std::size_t>(r)][1234], sumAt(inputs, 1234));
  }
}

TEST(HostStagedFaults, AStalledHostCopyDelaysTheOperationOrTimesItsPeersOut) {
  const auto inputs = inputsFor(3, 2000);
  // A short stall: the operation is late by it, and right.
  auto w = FaultyWorld::create(hostStagedMesh(3), hostStagedConfig());
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  const auto plain = (*w)->allreduce(inputs);
  const double plain_us = (*w)->world().stats().virtual_time_us;
  ASSERT_TRUE((*w)->faults().inject(Fault{FaultKind::kHostCopyStall, 1, -1, 0, 0, 400.0}).isOk());
  const auto late = (*w)->allreduce(inputs);
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(plain.status[static_cast<std::size_t>(r)].isOk());
    ASSERT_TRUE(late.status[static_cast<std::size_t>(r)].isOk()) << late.status[static_cast<std::size_t>(r)].toString();
    EXPECT_EQ(late.result[static_cast<std::size_t>(r)][77], sumAt(inputs, 77));
  }
  // The second operation took at least as long as the first, plus the stall.
  EXPECT_GE((*w)->world().stats().virtual_time_us - plain_us, plain_us + 400.0);
  // One past the wait deadline (5000 us): the peers that wait on the stalled rank time out, naming it
  // (in this operation where a wait follows the stalled copy, else at the next operation's entry fence).
  auto stuck = FaultyWorld::create(hostStagedMesh(3), hostStagedConfig());
  ASSERT_TRUE(stuck.isOk());
  ASSERT_TRUE((*stuck)->faults().inject(Fault{FaultKind::kHostCopyStall, 1, -1, 0, 0, 20000.0}).isOk());
  int timeouts = 0;
  for (int op = 0; op < 2; ++op) {
    for (const Status& s : (*stuck)->allreduce(inputs).status) {
      EXPECT_TRUE(s.isOk() || s.code() == ErrorCode::kTimeout) << s.toString();
      timeouts += s.code() == ErrorCode::kTimeout && contains(s.message(), "rank 1");
    }
  }
  EXPECT_GT(timeouts, 0);
}

TEST(HostStagedFaults, PinnedMemoryExhaustedInTheMiddleOfARunIsOutOfMemoryUntilHealed) {
  auto w = FaultyWorld::create(hostStagedMesh(3), hostStagedConfig());
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  const auto inputs = inputsFor(3, 2000);
  const auto first = (*w)->allreduce(inputs);
  for (const Status& s : first.status) ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_GT((*w)->comm(0).pinnedStats().bytes_staged, 0u);

  ASSERT_TRUE((*w)->faults().inject(Fault{FaultKind::kPinnedExhausted, 0, -1, 1, 0, 0.0}).isOk());
  const PinnedStats held = (*w)->comm(0).pinnedStats();
  EXPECT_GT(held.bytes_in_use, held.limit_bytes - kPinnedPageBytes) << describe(held);
  const auto second = (*w)->allreduce(inputs);
  const Status& exhausted = second.status[0];
  EXPECT_EQ(exhausted.code(), ErrorCode::kOutOfMemory) << exhausted.toString();
  EXPECT_TRUE(contains(exhausted.message(), "PEERREDUCE_PINNED_LIMIT_BYTES")) << exhausted.message();
  EXPECT_TRUE(contains(exhausted.message(), "rank 0")) << exhausted.message();

  (*w)->faults().healTransient();
  EXPECT_EQ((*w)->comm(0).pinnedStats().bytes_in_use, 0u) << "healing gives the pinned memory back";
}

// A shrink keeps each pair's class: the new world's mask names the host-staged pairs (host:A-B) of a
// world that mixes them with direct links, so a transport that sees direct links does not bring them back.
TEST(HostStagedFaults, AShrinkKeepsTheHostStagedPairsOfAMixedWorld) {
  Config config = hostStagedConfig();
  config.link_mask = "host:0-1,host:2-3";
  auto w = FaultyWorld::create(Topology::fullMesh(4), config);
  ASSERT_TRUE(w.isOk()) << w.status().toString();
  ASSERT_TRUE((*w)->faults().inject(Fault{FaultKind::kLinkDown, 1, 3, 0, 0, 0.0}).isOk());
  std::vector<FailureDecision> decisions;
  for (auto& d : (*w)->abortAndAgree()) {
    ASSERT_TRUE(d.isOk()) << d.status().toString();
    decisions.push_back(*d);
  }
  auto shrunk = (*w)->shrink(decisions);
  ASSERT_TRUE(shrunk.isOk()) << shrunk.status().toString();
  const Topology& links = (*shrunk)->comm(0).topology();
  EXPECT_EQ(links.link(0, 1).link_class, LinkClass::kHostStaged);
  EXPECT_EQ(links.link(3, 2).link_class, LinkClass::kHostStaged);
  EXPECT_EQ(links.link(0, 2).link_class, LinkClass::kNvLink);
  EXPECT_FALSE(links.canAccess(1, 3));
  EXPECT_EQ((*shrunk)->comm(2).config().link_mask, "host:0-1,1-3,host:2-3");
}

TEST(HostStagedFaults, FaultsThatCannotStrikeHereAreTypedErrors) {
  faults::FaultController no_clock(3, nullptr);
  EXPECT_EQ(no_clock.inject(Fault{FaultKind::kHostCopyStall, 0, -1, 0, 0, 10.0}).code(), ErrorCode::kUnsupported);
  const Status no_pool = no_clock.inject(Fault{FaultKind::kPinnedExhausted, 1, -1, 0, 0, 0.0});
  EXPECT_EQ(no_pool.code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(contains(no_pool.message(), "given no pinned pool")) << no_pool.message();
  EXPECT_EQ(no_clock.inject(Fault{FaultKind::kHostLinkDown, 0, 0, 0, 0, 0.0}).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(no_clock.inject(Fault{FaultKind::kHostLinkDown, 0, 5, 0, 0, 0.0}).code(), ErrorCode::kInvalidArgument);
  // Without faults' hooks a dead host-staged path refuses steps at submit, as a dead direct link does.
  ASSERT_TRUE(no_clock.inject(Fault{FaultKind::kHostLinkDown, 0, 2, 0, 0, 0.0}).isOk());
  EXPECT_TRUE(no_clock.linkDown(2, 0));
}

}  // namespace
}  // namespace peerreduce::testing
