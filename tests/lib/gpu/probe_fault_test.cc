// The access-probe fault setting's parser and when it strikes (gpu/probe_fault.h), and how failed pairs
// join the host-staged ones (gpu/host_staging.h: addHostStagedPairs).
#include "gpu/probe_fault.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu/kernel_choice.h"

namespace peerreduce::gpu {
namespace {

TEST(ProbeFault, PairsAllAndNone) {
  auto none = parseProbeFaultPairs("", 4);
  ASSERT_TRUE(none.isOk());
  EXPECT_TRUE(none->empty());
  auto pairs = parseProbeFaultPairs("0-1,3-2", 4);
  ASSERT_TRUE(pairs.isOk()) << pairs.status().toString();
  std::vector<std::uint8_t> expected(16, 0);
  expected[0 * 4 + 1] = expected[1 * 4 + 0] = expected[2 * 4 + 3] = expected[3 * 4 + 2] = 1;
  EXPECT_EQ(*pairs, expected);
  auto all = parseProbeFaultPairs("all", 3);
  ASSERT_TRUE(all.isOk());
  EXPECT_EQ(*all, (std::vector<std::uint8_t>{0, 1, 1, 1, 0, 1, 1, 1, 0}));
}

TEST(ProbeFault, MalformedValuesNameTheSettingAndTheForms) {
  for (const std::string text : {"host:0-1", "0-4", "1-1", "x", "0-1,", "host:all"}) {
    auto pairs = parseProbeFaultPairs(text, 4);
    ASSERT_FALSE(pairs.isOk()) << text;
    EXPECT_EQ(pairs.status().code(), ErrorCode::kInvalidArgument) << text;
    EXPECT_NE(pairs.status().message().find("PEERREDUCE_GPU_FAULT_PROBE_PAIRS='" + text + "'"), std::string::npos)
        << pairs.status().toString();
  }
  EXPECT_EQ(parseProbeFaultPairs("0-1", 0).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ProbeFault, TheGpuSettingsReadTheVariableThroughTheRegistry) {
  auto settings = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_FAULT_PROBE_PAIRS" ? "0-1,2-3" : nullptr;
  });
  ASSERT_TRUE(settings.isOk()) << settings.status().toString();
  EXPECT_EQ(settings->probe_fault_pairs, "0-1,2-3");
  auto unset = gpuSettingsFromEnvironment([](const char*) -> const char* { return nullptr; });
  ASSERT_TRUE(unset.isOk());
  EXPECT_TRUE(unset->probe_fault_pairs.empty());
}

TEST(ProbeFault, StrikesNamedPairsOnDirectPathsOnly) {
  auto pairs = parseProbeFaultPairs("0-2", 3);
  ASSERT_TRUE(pairs.isOk());
  EXPECT_TRUE(probeFaultStrikes(*pairs, 3, 0, 2, PeerPath::kDirect));
  EXPECT_TRUE(probeFaultStrikes(*pairs, 3, 2, 0, PeerPath::kDirect));
  EXPECT_FALSE(probeFaultStrikes(*pairs, 3, 0, 2, PeerPath::kHostMapped)) << "the fallback's path passes";
  EXPECT_FALSE(probeFaultStrikes(*pairs, 3, 0, 1, PeerPath::kDirect));
  EXPECT_FALSE(probeFaultStrikes(*pairs, 3, 0, 0, PeerPath::kDirect));
  EXPECT_FALSE(probeFaultStrikes(*pairs, 3, 0, 5, PeerPath::kDirect));
  EXPECT_FALSE(probeFaultStrikes({}, 3, 0, 2, PeerPath::kDirect));
}

TEST(ProbeFault, FailedPairsJoinTheForcedOnesAndTheRanksInThemPlaceInHost) {
  std::vector<std::uint8_t> forced;  // no mask
  std::vector<std::uint8_t> failed(9, 0);
  failed[0 * 3 + 1] = failed[1 * 3 + 0] = 1;
  ASSERT_TRUE(addHostStagedPairs(forced, failed, 3).isOk());
  EXPECT_EQ(forced, failed);
  EXPECT_TRUE(placeRegionInHost(forced, 0, 3, true));
  EXPECT_TRUE(placeRegionInHost(forced, 1, 3, true));
  EXPECT_FALSE(placeRegionInHost(forced, 2, 3, true));
  std::vector<std::uint8_t> more(9, 0);
  more[1 * 3 + 2] = more[2 * 3 + 1] = 1;
  ASSERT_TRUE(addHostStagedPairs(forced, more, 3).isOk());
  EXPECT_EQ(forced, (std::vector<std::uint8_t>{0, 1, 0, 1, 0, 1, 0, 1, 0}));
  // A fallen-back pair is reached through host memory on both sides.
  auto path = choosePeerPath(PeerReach{0, 1, true, true, RegionPlacement::kHost, RegionPlacement::kHost});
  ASSERT_TRUE(path.isOk());
  EXPECT_EQ(*path, PeerPath::kHostMapped);
  EXPECT_EQ(addHostStagedPairs(forced, std::vector<std::uint8_t>(4, 0), 3).code(), ErrorCode::kInvalidArgument);
  std::vector<std::uint8_t> wrong(4, 0);
  EXPECT_EQ(addHostStagedPairs(wrong, more, 3).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace peerreduce::gpu
