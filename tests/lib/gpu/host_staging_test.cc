// The GPU transport's host-staged links, decided without a GPU (lib/gpu/host_staging.h): which ranks
// place their region in host memory, how a pair is reached, which kernels a staged world runs, and the
// traffic an operation moves through host memory.
#include "gpu/host_staging.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "api/topology_agreement.h"

namespace peerreduce::gpu {
namespace {

std::vector<std::uint8_t> forcedPairs(int n, std::initializer_list<std::pair<int, int>> pairs) {
  std::vector<std::uint8_t> forced(static_cast<std::size_t>(n * n), 0);
  for (auto [a, b] : pairs) {
    forced[static_cast<std::size_t>(a * n + b)] = 1;
    forced[static_cast<std::size_t>(b * n + a)] = 1;
  }
  return forced;
}

TEST(HostStaging, ARankPlacesItsRegionInHostMemoryWhenAPairOfItIsForcedOrItsDeviceLacksPeerAccess) {
  const auto forced = forcedPairs(4, {{0, 1}});
  EXPECT_TRUE(placeRegionInHost(forced, 0, 4, true));
  EXPECT_TRUE(placeRegionInHost(forced, 1, 4, true));
  EXPECT_FALSE(placeRegionInHost(forced, 2, 4, true));
  EXPECT_FALSE(placeRegionInHost({}, 3, 4, true));
  EXPECT_TRUE(placeRegionInHost({}, 3, 4, false));  // the runtime says some device is out of reach
  // A matrix of another world's size forces nothing (configureHostStaging refuses it earlier).
  EXPECT_FALSE(placeRegionInHost(forcedPairs(2, {{0, 1}}), 0, 4, true));
}

TEST(HostStaging, APairIsReachedThroughHostMemoryWhenForcedOrWithoutPeerAccessAndBothSidesMustBeInHost) {
  PeerReach reach{0, 1, false, true, RegionPlacement::kDevice, RegionPlacement::kDevice};
  EXPECT_EQ(choosePeerPath(reach).value(), PeerPath::kDirect);
  // A peer in host memory (it has a host-staged peer elsewhere) is read through its mapping.
  reach.peer_placement = RegionPlacement::kHost;
  EXPECT_EQ(choosePeerPath(reach).value(), PeerPath::kHostMapped);
  for (const bool forced : {true, false}) {
    // Forced on a machine with peer access, or not forced where the devices have none.
    reach = PeerReach{2, 3, forced, /*peer_access=*/forced, RegionPlacement::kHost, RegionPlacement::kHost};
    EXPECT_EQ(choosePeerPath(reach).value(), PeerPath::kHostMapped);
    reach.peer_placement = RegionPlacement::kDevice;
    auto refused = choosePeerPath(reach);
    ASSERT_FALSE(refused.isOk());
    EXPECT_EQ(refused.status().code(), ErrorCode::kUnavailable);
    const std::string text = refused.status().message();
    EXPECT_NE(text.find("rank 2 mapping rank 3"), std::string::npos) << text;
    EXPECT_NE(text.find("rank 3 placed its memory on its device"), std::string::npos) << text;
    EXPECT_NE(text.find("PEERREDUCE_LINK_MASK=host:2-3"), std::string::npos) << text;
    EXPECT_NE(text.find(forced ? "the link mask forces it" : "no peer access"), std::string::npos) << text;
    reach.peer_placement = RegionPlacement::kHost;
    reach.own_placement = RegionPlacement::kDevice;
    refused = choosePeerPath(reach);
    ASSERT_FALSE(refused.isOk());
    EXPECT_NE(refused.status().message().find("rank 2 placed its memory"), std::string::npos);
  }
}

// Lines up to the host-staged cap (each 8-byte half of a line carries its flag, which a PCIe write
// delivers whole), within the world size's own line limits; past it the pulling kernels, and at two ranks
// the pushing one-shot and collectives from the host thresholds; the pushing two-shot never.
TEST(HostStaging, AStagedWorldRunsLinesUpToItsCapThenThePullingKernels) {
  ASSERT_GT(KernelPolicy{}.host_lines_max_bytes, 0u);
  for (const int n : {2, 4, 8}) {
    const std::uint64_t cap = n == 2 ? kDefaultHostLinesTwoRankMaxBytes : KernelPolicy{}.host_lines_max_bytes;
    const KernelPolicy staged = hostStagedKernelPolicy(KernelPolicy{}, n);
    EXPECT_TRUE(staged.fused);
    for (std::uint64_t bytes = 16; bytes <= (std::uint64_t{1} << 30); bytes *= 4) {
      const bool lines = bytes <= cap && bytes <= linePayloadBytes(n);
      // Two-shot lines also need a vector for every owner.
      const bool two_lines =
          bytes <= cap && bytes <= lineTwoShotPayloadBytes(n) && bytes >= static_cast<std::uint64_t>(16 * n);
      const KernelChoice one = chooseKernel(FusedKind::kOneShot, bytes, n, staged);
      const KernelChoice two = chooseKernel(FusedKind::kTwoShot, bytes, n, staged);
      const bool pushed_one = n == 2 && bytes >= kDefaultHostPushOneShotMinBytes;
      const bool pushed_direct = n == 2 && bytes >= kDefaultHostPushCollectiveMinBytes;
      EXPECT_EQ(one, lines        ? KernelChoice::kOneShotLines
                     : pushed_one ? KernelChoice::kOneShotPush
                                  : KernelChoice::kOneShotPull)
          << n << " " << bytes;
      EXPECT_EQ(two, two_lines ? KernelChoice::kTwoShotLines : KernelChoice::kTwoShotPull) << n << " " << bytes;
      for (const FusedKind direct :
           {FusedKind::kReduceScatterDirect, FusedKind::kAllGatherDirect, FusedKind::kBroadcastDirect}) {
        const KernelChoice choice = chooseKernel(direct, bytes, n, staged);
        EXPECT_EQ(choice == KernelChoice::kInterpreter, !lines && !pushed_direct) << n << " " << bytes;
        EXPECT_EQ(runsPushed(choice), pushed_direct) << n << " " << bytes;
      }
    }
    EXPECT_EQ(maxBatchBytes(FusedKind::kOneShot, n, staged), std::min(cap, linePayloadBytes(n)));
    EXPECT_EQ(staged.push_min_bytes, 0u);
    EXPECT_EQ(staged.push_one_shot_min_bytes, kDefaultHostPushOneShotMinBytes);
    EXPECT_EQ(staged.push_collective_min_bytes, kDefaultHostPushCollectiveMinBytes);
    // Idempotent: a transport that falls back twice applies it twice.
    const KernelPolicy twice = hostStagedKernelPolicy(staged, n);
    EXPECT_EQ(twice.max_bytes, staged.max_bytes);
    EXPECT_EQ(twice.collective_max_bytes, staged.collective_max_bytes);
    EXPECT_EQ(twice.push_one_shot_min_bytes, staged.push_one_shot_min_bytes);
    EXPECT_EQ(twice.push_collective_min_bytes, staged.push_collective_min_bytes);
  }
  // The setting's 0 turns lines off where memory is staged, and leaves unstaged worlds alone.
  KernelPolicy off;
  off.host_lines_max_bytes = 0;
  const KernelPolicy staged_off = hostStagedKernelPolicy(off, 4);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 16, 4, staged_off), KernelChoice::kOneShotPull);
  EXPECT_EQ(chooseKernel(FusedKind::kAllGatherDirect, 16, 4, staged_off), KernelChoice::kInterpreter);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 16, 4, off), KernelChoice::kOneShotLines);
  // A cap above a world's own limit keeps that limit (256 KiB one-shot lines at four ranks).
  KernelPolicy wide;
  wide.host_lines_max_bytes = std::uint64_t{1} << 30;
  EXPECT_EQ(hostStagedKernelPolicy(wide, 4).max_bytes, oneShotLinesMaxBytes(KernelPolicy{}, 4));
  // The setting, when given, holds at two ranks too (it clears the two-rank default).
  const auto set = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_LL_HOST_MAX_BYTES" ? "16K" : nullptr;
  });
  ASSERT_TRUE(set.isOk()) << set.status().toString();
  EXPECT_EQ(set->kernels.host_lines_max_bytes, 16u * 1024);
  EXPECT_EQ(hostStagedKernelPolicy(set->kernels, 2).max_bytes, 16u * 1024);
  EXPECT_EQ(hostStagedKernelPolicy(KernelPolicy{}, 2).max_bytes, kDefaultHostLinesTwoRankMaxBytes);
  const auto bad = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_LL_HOST_MAX_BYTES" ? "lots" : nullptr;
  });
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("PEERREDUCE_GPU_LL_HOST_MAX_BYTES"), std::string::npos)
      << bad.status().message();
}

TEST(HostStaging, TrafficCountsEveryScratchAccessToAHostPlacedRegion) {
  PlanRequest request(Algorithm::kOneShot, 2);
  const Plan plan = buildPlan(request).value();
  const ChunkLayout layout = ChunkLayout::make(1000, plan.num_chunks, 4);
  // One-shot: each rank publishes its input into its scratch and reduces both ranks' scratch.
  const std::vector<std::int32_t> both = stagedChunkAccesses(plan, 0, {true, true});
  EXPECT_EQ(both.size(), 3u);
  EXPECT_EQ(stagedBytes(both, layout, 4), 3u * 4000u);
  EXPECT_EQ(stagedChunkAccesses(plan, 0, {false, true}).size(), 1u);  // only the peer's copy is read there
  EXPECT_EQ(stagedChunkAccesses(plan, 0, {true, false}).size(), 2u);  // its own publish and read
  EXPECT_TRUE(stagedChunkAccesses(plan, 0, {false, false}).empty());
}

// Private slots stay on the device whatever the placement (gpu_transport.cc), so only the shared slots'
// accesses count: the copy-engine two-shot's private form moves S up and 2 (n - 1) / n S down per rank.
TEST(HostStaging, PrivateSlotsAreNotCountedAsHostTraffic) {
  constexpr int n = 4;
  PlanRequest request{Algorithm::kCopyEngineTwoShot, n, false};
  request.reduce_from_private = true;
  const Plan plan = *buildPlan(request);
  ASSERT_GT(plan.private_slots, 0);
  const std::vector<std::int32_t> chunks = stagedChunkAccesses(plan, 2, std::vector<bool>(n, true));
  EXPECT_EQ(chunks.size(), static_cast<std::size_t>(kCopyEngineTwoShotStages * (n + 2 * (n - 1))));
  const std::size_t count = static_cast<std::size_t>(plan.num_chunks) * 1000;
  const ChunkLayout layout = ChunkLayout::make(count, plan.num_chunks, 4);
  EXPECT_EQ(stagedBytes(chunks, layout, 4), static_cast<std::uint64_t>(count) * 4 * (3 * n - 2) / n)
      << "S up, 2 (n - 1) / n S down";
}

// A line launch's traffic: 16 bytes per 8 data bytes, written where the receiver is host-placed and read
// where this rank is; the presence lines of a broadcast's receivers too.
TEST(HostStaging, LineLaunchesCountTheirOwnBytes) {
  const std::vector<bool> all(4, true);
  constexpr std::uint64_t kBytes = 4096;
  EXPECT_EQ(lineStagedBytes(KernelChoice::kOneShotLines, kBytes, 0, 0, all), 3u * 8192 + 3u * 8192);
  EXPECT_EQ(lineStagedBytes(KernelChoice::kAllGatherLines, kBytes, 2, 0, all), 6u * 8192);
  EXPECT_EQ(lineStagedBytes(KernelChoice::kReduceScatterLines, kBytes, 3, 0, all), 6u * 8192);
  // Only rank 1 host-placed: rank 0 writes into its lines, reads its own in device memory.
  const std::vector<bool> one{false, true, false, false};
  EXPECT_EQ(lineStagedBytes(KernelChoice::kOneShotLines, kBytes, 0, 0, one), 8192u);
  EXPECT_EQ(lineStagedBytes(KernelChoice::kOneShotLines, kBytes, 1, 0, one), 3u * 8192) << "reads only";
  // Two-shot: a quarter to each owner and each owner's quarter back, both ways.
  EXPECT_EQ(lineStagedBytes(KernelChoice::kTwoShotLines, kBytes, 0, 0, all), 3u * 4096 + 3u * 4096);
  // Broadcast from rank 0: the root sends the data, receivers their presence lines.
  EXPECT_EQ(lineStagedBytes(KernelChoice::kBroadcastLines, kBytes, 0, 0, all), 3u * 8192 + 3u * 16);
  EXPECT_EQ(lineStagedBytes(KernelChoice::kBroadcastLines, kBytes, 2, 0, all), 3u * 16 + 8192 + 2u * 16);
  // Nothing host-placed, a kernel that is not lines, or no peers: nothing.
  EXPECT_EQ(lineStagedBytes(KernelChoice::kOneShotLines, kBytes, 0, 0, std::vector<bool>(4, false)), 0u);
  EXPECT_EQ(lineStagedBytes(KernelChoice::kOneShotPull, kBytes, 0, 0, all), 0u);
  EXPECT_EQ(lineStagedBytes(KernelChoice::kOneShotLines, kBytes, 0, 0, std::vector<bool>(1, true)), 0u);
}

TEST(HostStaging, TheMaskForcesItsHostEntriesAndNothingElse) {
  const auto none = hostStagedPairs("", 4).value();
  EXPECT_EQ(none, std::vector<std::uint8_t>(16, 0));
  const auto removed = hostStagedPairs("0-1", 4).value();
  EXPECT_EQ(removed, std::vector<std::uint8_t>(16, 0));
  // host:A-B forces the pair both ways; host:all every pair but those a removal takes out.
  std::vector<std::uint8_t> expected(16, 0);
  expected[0 * 4 + 1] = expected[1 * 4 + 0] = 1;
  EXPECT_EQ(hostStagedPairs("host:0-1", 4).value(), expected);
  const auto all_but = hostStagedPairs("host:all,2-3", 4).value();
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      const bool staged = a != b && !((a == 2 && b == 3) || (a == 3 && b == 2));
      EXPECT_EQ(all_but[static_cast<std::size_t>(a * 4 + b)], staged ? 1 : 0) << a << "-" << b;
    }
  }
  auto bad = hostStagedPairs("0-9", 4);
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace peerreduce::gpu
