// Access probes that fail at creation (faults_probe.cc): the ranks agree on the failed pairs, fall back to
// host-staged links for them and exchange again, and the world they end up in is the one the link mask's
// host:A-B entries make: the same agreed links on every rank, the same plans, the same bits and the same
// traffic through pinned memory. A probe that fails on the host-staged path too fails creation, naming the
// pair and both exchanges.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "faulty_world.h"

namespace peerreduce::testing {
namespace {

using faults::Fault;
using faults::FaultKind;

Fault probeFailure(int rank, int peer, FaultKind kind = FaultKind::kProbeFailure) {
  Fault f;
  f.kind = kind;
  f.rank = rank;
  f.peer = peer;
  return f;
}

// Every rank allreduces floats of `count` elements (sum); the bits of each rank's result, or the error.
StatusOr<std::vector<std::vector<std::uint32_t>>> floatAllreduce(FaultyWorld& world, std::size_t count) {
  const int n = world.size();
  std::vector<std::vector<float>> data(static_cast<std::size_t>(n), std::vector<float>(count));
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < count; ++i) {
      // Values whose sum depends on the order it is taken in, so a different plan shows in the bits.
      data[static_cast<std::size_t>(r)][i] =
          1.0f / static_cast<float>(3 + r + static_cast<int>(i % 11)) + static_cast<float>(r) * 1e4f;
    }
  }
  for (int r = 0; r < n; ++r) {
    auto& buffer = data[static_cast<std::size_t>(r)];
    PR_RETURN_IF_ERROR(
        world.comm(r).allreduce(buffer.data(), buffer.data(), count, DataType::kFloat32, ReduceOp::kSum));
  }
  PR_RETURN_IF_ERROR(world.world().runUntilIdle());
  std::vector<std::vector<std::uint32_t>> bits(static_cast<std::size_t>(n), std::vector<std::uint32_t>(count));
  for (int r = 0; r < n; ++r) {
    PR_RETURN_IF_ERROR(world.comm(r).asyncError());
    std::memcpy(bits[static_cast<std::size_t>(r)].data(), data[static_cast<std::size_t>(r)].data(), count * 4);
  }
  return bits;
}

// A world whose probes of `failing` fail against the world the mask makes host-staged: links, results and
// staged bytes must be the same.
void expectSameAsMaskedWorld(int ranks, const std::vector<std::pair<int, int>>& failing, const std::string& mask) {
  SCOPED_TRACE("mask " + mask);
  std::vector<Fault> faults;
  for (const auto& [rank, peer] : failing) faults.push_back(probeFailure(rank, peer));
  auto fallen = FaultyWorld::create(Topology::fullMesh(ranks), FaultyWorld::smallConfig(), 5000.0, faults);
  ASSERT_TRUE(fallen.isOk()) << fallen.status().toString();
  Config masked_config = FaultyWorld::smallConfig();
  masked_config.link_mask = mask;
  auto masked = FaultyWorld::create(Topology::fullMesh(ranks), masked_config);
  ASSERT_TRUE(masked.isOk()) << masked.status().toString();
  const Topology agreed = (*fallen)->comm(0).topology();
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ((*fallen)->comm(r).topology(), agreed) << "rank " << r << " agrees with rank 0";
    EXPECT_EQ((*fallen)->comm(r).topology(), (*masked)->comm(r).topology()) << "rank " << r;
  }
  for (const auto& [rank, peer] : failing) {
    EXPECT_EQ(agreed.link(rank, peer).link_class, LinkClass::kHostStaged);
    EXPECT_EQ(agreed.link(peer, rank).link_class, LinkClass::kHostStaged);
  }
  for (const std::size_t count : {std::size_t{96}, std::size_t{5000}, std::size_t{70000}}) {
    auto a = floatAllreduce(**fallen, count);
    auto b = floatAllreduce(**masked, count);
    ASSERT_TRUE(a.isOk()) << a.status().toString();
    ASSERT_TRUE(b.isOk()) << b.status().toString();
    EXPECT_EQ(*a, *b) << count << " floats: the bits of the host-staged world";
    for (int r = 1; r < ranks; ++r) EXPECT_EQ((*a)[static_cast<std::size_t>(r)], (*a)[0]) << "rank " << r;
  }
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ((*fallen)->comm(r).pinnedStats().bytes_staged, (*masked)->comm(r).pinnedStats().bytes_staged)
        << "rank " << r;
  }
}

TEST(ProbeFallback, FailedProbesFallBackToTheWorldTheMaskMakesHostStaged) {
  // One side's probe, both sides' probes, a pair not involving rank 0, and several pairs at once.
  expectSameAsMaskedWorld(4, {{0, 1}}, "host:0-1");
  expectSameAsMaskedWorld(4, {{3, 2}, {2, 3}}, "host:2-3");
  expectSameAsMaskedWorld(4, {{1, 3}, {2, 0}}, "host:1-3,host:0-2");
}

TEST(ProbeFallback, EveryProbeFailingIsAWorldWithoutPeerAccess) {
  std::vector<std::pair<int, int>> every;
  for (int a = 0; a < 3; ++a) {
    for (int b = a + 1; b < 3; ++b) every.emplace_back(a, b);
  }
  expectSameAsMaskedWorld(3, every, "host:all");
}

TEST(ProbeFallback, AProbeThatFailsOnTheHostStagedPathTooFailsCreationNamingThePairAndBothExchanges) {
  auto world = FaultyWorld::create(Topology::fullMesh(4), FaultyWorld::smallConfig(), 5000.0,
                                   {probeFailure(1, 2, FaultKind::kProbeFailurePersistent)});
  ASSERT_FALSE(world.isOk());
  EXPECT_EQ(world.status().code(), ErrorCode::kUnavailable) << world.status().toString();
  const std::string text = world.status().message();
  EXPECT_NE(text.find("pairs 1-2 (rank 1's probe of rank 2) at exchange 2"), std::string::npos) << text;
  EXPECT_NE(text.find("exchange 1 had failed on pairs 1-2"), std::string::npos) << text;
}

TEST(ProbeFallback, ProbeFaultsAreCreationFaultsWithNamesAndNeedAPeer) {
  for (FaultKind kind : {FaultKind::kProbeFailure, FaultKind::kProbeFailurePersistent}) {
    EXPECT_TRUE(faults::isProbeFault(kind));
    EXPECT_TRUE(faults::isCreationFault(kind));
    EXPECT_FALSE(faults::isPermanentFault(kind));
    auto parsed = faults::parseFaultKind(faults::faultKindName(kind));
    ASSERT_TRUE(parsed.isOk());
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_FALSE(faults::isProbeFault(FaultKind::kIpcOpenFailure));
  EXPECT_EQ(probeFailure(0, 3).describe(), "probe-failure rank 0 of rank 3 at creation");
  faults::FaultController controller(2, nullptr);
  EXPECT_EQ(controller.inject(probeFailure(0, 0)).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(controller.inject(probeFailure(0, 2)).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace peerreduce::testing
