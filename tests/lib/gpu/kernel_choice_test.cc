// Which GPU kernel runs an operation, and the low-latency lines' memory (lib/gpu/kernel_choice.h),
// checked without a GPU.
#include "gpu/kernel_choice.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpu/host_staging.h"
#include "peerreduce/types.h"
#include "portability.h"

namespace peerreduce::gpu {
namespace {

constexpr std::uint64_t kKernelChoiceKiB = 1024;
constexpr std::uint64_t kKernelChoiceMiB = 1024 * kKernelChoiceKiB;

TEST(KernelChoice, LineCapacityHoldsWholeVectorsInBothHalvesAndTheAreaStaysWithinTheBudget) {
  for (int n = 1; n <= kMaxWorldSize; ++n) {
    const std::uint64_t capacity = lineCapacityBytes(n);
    EXPECT_EQ(capacity % 64, 0u) << n;
    EXPECT_GT(capacity, 0u) << n;
    EXPECT_LE(lineAreaBytes(n), kLineAreaBudgetBytes) << n;
    EXPECT_EQ(lineAreaBytes(n), 2u * static_cast<std::uint64_t>(n) * capacity) << n;
    // One-shot: 16 payload bytes take 32 line bytes, so the payload is half the capacity.
    EXPECT_EQ(linePayloadBytes(n) * 2, capacity) << n;
    // Two-shot: the largest payload's owner ranges (ceil(vectors / n) vectors) fill a half exactly.
    const std::uint64_t vectors = lineTwoShotPayloadBytes(n) / 16;
    const std::uint64_t range = (vectors + n - 1) / static_cast<std::uint64_t>(n);
    EXPECT_EQ(range * 32, capacity / 2) << n;
  }
  EXPECT_EQ(linePayloadBytes(4), 512 * kKernelChoiceKiB);
  EXPECT_EQ(lineTwoShotPayloadBytes(4), 1 * kKernelChoiceMiB);
  EXPECT_EQ(linePayloadBytes(2), 1 * kKernelChoiceMiB);
}

TEST(KernelChoice, OneShotProgramsRunAsLinesWithinBothLimitsElseFused) {
  const KernelPolicy policy;
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4096, 4, policy), KernelChoice::kOneShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 1, 4, policy), KernelChoice::kOneShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, policy.max_bytes, 4, policy), KernelChoice::kOneShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, policy.max_bytes + 1, 4, policy), KernelChoice::kOneShotPull);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4096, 1, policy), KernelChoice::kOneShotPull)
      << "a single rank has no peer to push to";
  // The payload limit of a large world binds before the setting does.
  KernelPolicy generous;
  generous.max_bytes = std::uint64_t{1} << 30;
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, linePayloadBytes(64), 64, generous), KernelChoice::kOneShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, linePayloadBytes(64) + 16, 64, generous), KernelChoice::kOneShotPull);
  KernelPolicy off;
  off.max_bytes = 0;
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 16, 4, off), KernelChoice::kOneShotPull);
}

// Two ranks carry larger one-shots as lines by default (each rank writes one peer); a setting of the
// limit holds at every world size, and off stays off.
TEST(KernelChoice, TwoRanksRunLargerOneShotsAsLinesUnlessTheLimitIsSet) {
  const KernelPolicy policy;
  EXPECT_EQ(oneShotLinesMaxBytes(policy, 2), kDefaultLowLatencyTwoRankMaxBytes);
  EXPECT_EQ(oneShotLinesMaxBytes(policy, 3), kDefaultLowLatencyMaxBytes);
  EXPECT_EQ(oneShotLinesMaxBytes(policy, 4), kDefaultLowLatencyMaxBytes);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 1 * kKernelChoiceMiB, 2, policy), KernelChoice::kOneShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 1 * kKernelChoiceMiB + 16, 2, policy), KernelChoice::kOneShotPull)
      << "past the lines' capacity at two ranks";
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 512 * kKernelChoiceKiB, 4, policy), KernelChoice::kOneShotPull);
  EXPECT_EQ(maxBatchBytes(FusedKind::kOneShot, 2, policy), 1 * kKernelChoiceMiB);

  auto set = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_LL_MAX_BYTES" ? "128K" : nullptr;
  });
  ASSERT_TRUE(set.isOk()) << set.status().toString();
  EXPECT_FALSE(set->kernels.two_rank_default);
  EXPECT_EQ(oneShotLinesMaxBytes(set->kernels, 2), 128 * kKernelChoiceKiB) << "the setting holds at two ranks";
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 256 * kKernelChoiceKiB, 2, set->kernels), KernelChoice::kOneShotPull);
  EXPECT_EQ(oneShotLinesMaxBytes(set->kernels, 4), 128 * kKernelChoiceKiB);

  KernelPolicy off;
  off.max_bytes = 0;  // as the host-staged transport sets it
  EXPECT_EQ(oneShotLinesMaxBytes(off, 2), 0u);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 16, 2, off), KernelChoice::kOneShotPull);
  EXPECT_EQ(maxBatchBytes(FusedKind::kOneShot, 2, off), 0u);
}

// Two ranks carry the other collectives' 1 MiB blocks as lines by default (a writer's lines hold 1 MiB
// there, as the one-shot's); a setting of the limit holds at every world size, and off stays off.
TEST(KernelChoice, TwoRanksRunLargerCollectiveBlocksAsLinesUnlessTheLimitIsSet) {
  const KernelPolicy policy;
  EXPECT_EQ(collectiveLinesMaxBytes(policy, 2), kDefaultCollectiveLinesTwoRankMaxBytes);
  EXPECT_EQ(collectiveLinesMaxBytes(policy, 3), kDefaultCollectiveLinesMaxBytes);
  EXPECT_EQ(collectiveLinesMaxBytes(policy, 4), kDefaultCollectiveLinesMaxBytes);
  EXPECT_EQ(kDefaultCollectiveLinesTwoRankMaxBytes, linePayloadBytes(2)) << "exactly what a writer's lines hold";
  for (FusedKind kind : {FusedKind::kReduceScatterDirect, FusedKind::kAllGatherDirect, FusedKind::kBroadcastDirect}) {
    EXPECT_TRUE(runsAsLines(chooseKernel(kind, 1 * kKernelChoiceMiB, 2, policy)));
    EXPECT_TRUE(runsPushed(chooseKernel(kind, 1 * kKernelChoiceMiB + 16, 2, policy)))
        << "past the lines' capacity at two ranks: pushed (kDefaultPushCollectiveMinBytes)";
    EXPECT_EQ(chooseKernel(kind, 1 * kKernelChoiceMiB, 4, policy), KernelChoice::kInterpreter)
        << "four ranks keep 512 KiB";
  }

  auto set = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES" ? "256K" : nullptr;
  });
  ASSERT_TRUE(set.isOk()) << set.status().toString();
  EXPECT_FALSE(set->kernels.collective_two_rank_default);
  EXPECT_TRUE(set->kernels.two_rank_default) << "the allreduce one-shot's default is its own";
  EXPECT_EQ(collectiveLinesMaxBytes(set->kernels, 2), 256 * kKernelChoiceKiB) << "the setting holds at two ranks";
  EXPECT_EQ(chooseKernel(FusedKind::kBroadcastDirect, 512 * kKernelChoiceKiB, 2, set->kernels),
            KernelChoice::kInterpreter);
  EXPECT_EQ(collectiveLinesMaxBytes(set->kernels, 4), 256 * kKernelChoiceKiB);

  KernelPolicy off;
  off.collective_max_bytes = 0;  // as the host-staged transport sets it
  EXPECT_EQ(collectiveLinesMaxBytes(off, 2), 0u);
  EXPECT_EQ(chooseKernel(FusedKind::kAllGatherDirect, 16, 2, off), KernelChoice::kInterpreter);
}

// The pushing one-shot: two-rank one-shots past the lines from its size on push (2 MiB by default, measured),
// and no other world (its one slot per peer is the one-shot plan's slot 0, which only two ranks share that way);
// the setting moves the size or, at 0, turns it off.
TEST(KernelChoice, TwoRankOneShotsPastTheLinesPushFromTheirSize) {
  const KernelPolicy policy;
  EXPECT_EQ(policy.push_one_shot_min_bytes, 2 * kKernelChoiceMiB) << "measured on 2 x H200 (docs/PERF.md)";
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4 * kKernelChoiceMiB, 2, policy), KernelChoice::kOneShotPush);
  auto off = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES" ? "0" : nullptr;
  });
  ASSERT_TRUE(off.isOk()) << off.status().toString();
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4 * kKernelChoiceMiB, 2, off->kernels), KernelChoice::kOneShotPull)
      << "0: off";
  auto set = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES" ? "3M" : nullptr;
  });
  ASSERT_TRUE(set.isOk()) << set.status().toString();
  EXPECT_EQ(set->kernels.push_one_shot_min_bytes, 3 * kKernelChoiceMiB);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 2 * kKernelChoiceMiB, 2, set->kernels), KernelChoice::kOneShotPull);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 3 * kKernelChoiceMiB, 2, set->kernels), KernelChoice::kOneShotPush);
  const KernelPolicy& push = policy;
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 1 * kKernelChoiceMiB, 2, push), KernelChoice::kOneShotLines)
      << "lines first";
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 2 * kKernelChoiceMiB - 16, 2, push), KernelChoice::kOneShotPull);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 2 * kKernelChoiceMiB, 2, push), KernelChoice::kOneShotPush);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 256 * kKernelChoiceMiB, 2, push), KernelChoice::kOneShotPush);
  for (int n : {3, 4, 8})
    EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4 * kKernelChoiceMiB, n, push), KernelChoice::kOneShotPull) << n;
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 4 * kKernelChoiceMiB, 2, push), KernelChoice::kTwoShotPush)
      << "two-shots keep theirs";
  EXPECT_FALSE(runsAsLines(KernelChoice::kOneShotPush));
  EXPECT_EQ(
      launchBlocks(KernelChoice::kOneShotPush, 64 * kKernelChoiceMiB, 132, 32 * kKernelChoiceKiB, 8 * kKernelChoiceKiB),
      132)
      << "no launch-wide synchronisation: every multiprocessor, as the push two-shot";
  EXPECT_EQ(
      launchBlocks(KernelChoice::kOneShotPull, 64 * kKernelChoiceMiB, 132, 32 * kKernelChoiceKiB, 8 * kKernelChoiceKiB),
      kDefaultMaxBlocks);
  KernelPolicy staged = hostStagedKernelPolicy(push, 2);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4 * kKernelChoiceMiB, 2, staged), KernelChoice::kOneShotPull)
      << "host memory: the pull below the host threshold";
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, kDefaultHostPushOneShotMinBytes - 16, 2, staged),
            KernelChoice::kOneShotPull);
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, kDefaultHostPushOneShotMinBytes, 2, staged), KernelChoice::kOneShotPush)
      << "host memory: pushed from the host threshold";
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 256 * kKernelChoiceKiB, 2, staged), KernelChoice::kOneShotLines)
      << "the host lines first";
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 64 * kKernelChoiceMiB, 4, hostStagedKernelPolicy(KernelPolicy{}, 4)),
            KernelChoice::kTwoShotPull)
      << "the pushing two-shot never";
  auto push_host_off = gpuSettingsFromEnvironment(
      [](const char* name) -> const char* { return std::string(name) == "PEERREDUCE_GPU_PUSH_HOST" ? "0" : nullptr; });
  ASSERT_TRUE(push_host_off.isOk()) << push_host_off.status().toString();
  EXPECT_FALSE(push_host_off->kernels.push_host);
  EXPECT_EQ(
      chooseKernel(FusedKind::kOneShot, 256 * kKernelChoiceMiB, 2, hostStagedKernelPolicy(push_host_off->kernels, 2)),
      KernelChoice::kOneShotPull)
      << "PEERREDUCE_GPU_PUSH_HOST=0: the pull at every size";
  auto from_one_vector = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_PUSH_ONE_SHOT_MIN_BYTES" ? "16" : nullptr;
  });
  ASSERT_TRUE(from_one_vector.isOk()) << from_one_vector.status().toString();
  EXPECT_EQ(
      chooseKernel(FusedKind::kOneShot, 4 * kKernelChoiceMiB, 2, hostStagedKernelPolicy(from_one_vector->kernels, 2)),
      KernelChoice::kOneShotPush)
      << "a given threshold holds in host memory too";
  EXPECT_EQ(hostStagedKernelPolicy(from_one_vector->kernels, 2).push_collective_min_bytes,
            kDefaultHostPushCollectiveMinBytes)
      << "the other threshold keeps its host default";
  KernelPolicy interpreter = push;
  interpreter.fused = false;
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4 * kKernelChoiceMiB, 2, interpreter), KernelChoice::kInterpreter);
}

// The pushing reduce-scatter, all-gather and broadcast: two-rank direct plans past the lines from their
// block size on (1 MiB by default: every block the lines leave), no other world (their one slot per peer is
// the direct plans' slot 0), not where a region is host memory; the setting moves the size or, at 0, turns
// them off; every multiprocessor, as the other push kernels.
TEST(KernelChoice, TwoRankDirectCollectivesPastTheLinesPushFromTheirSize) {
  const struct {
    FusedKind kind;
    KernelChoice pushed;
  } shapes[] = {{FusedKind::kReduceScatterDirect, KernelChoice::kReduceScatterPush},
                {FusedKind::kAllGatherDirect, KernelChoice::kAllGatherPush},
                {FusedKind::kBroadcastDirect, KernelChoice::kBroadcastPush}};
  const KernelPolicy policy;
  EXPECT_EQ(policy.push_collective_min_bytes, 1 * kKernelChoiceMiB);
  auto set = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES" ? "3M" : nullptr;
  });
  ASSERT_TRUE(set.isOk()) << set.status().toString();
  EXPECT_EQ(set->kernels.push_collective_min_bytes, 3 * kKernelChoiceMiB);
  auto off = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_PUSH_COLLECTIVE_MIN_BYTES" ? "0" : nullptr;
  });
  ASSERT_TRUE(off.isOk()) << off.status().toString();
  KernelPolicy no_lines;
  no_lines.collective_max_bytes = 0;
  no_lines.push_collective_min_bytes = 1;
  for (const auto& shape : shapes) {
    EXPECT_TRUE(runsAsLines(chooseKernel(shape.kind, 1 * kKernelChoiceMiB, 2, policy))) << "lines first";
    EXPECT_EQ(chooseKernel(shape.kind, 1 * kKernelChoiceMiB + 16, 2, policy), shape.pushed);
    EXPECT_EQ(chooseKernel(shape.kind, 256 * kKernelChoiceMiB, 2, policy), shape.pushed);
    for (int n : {3, 4, 8}) {
      EXPECT_EQ(chooseKernel(shape.kind, 4 * kKernelChoiceMiB, n, policy), KernelChoice::kInterpreter)
          << n << " ranks: two only by default";
    }
    EXPECT_EQ(chooseKernel(shape.kind, 2 * kKernelChoiceMiB, 2, set->kernels), KernelChoice::kInterpreter);
    EXPECT_EQ(chooseKernel(shape.kind, 3 * kKernelChoiceMiB, 2, set->kernels), shape.pushed);
    EXPECT_EQ(chooseKernel(shape.kind, 64 * kKernelChoiceMiB, 2, off->kernels), KernelChoice::kInterpreter) << "0: off";
    EXPECT_EQ(chooseKernel(shape.kind, 16, 2, no_lines), shape.pushed) << "without lines, from one vector";
    EXPECT_EQ(chooseKernel(shape.kind, 0, 2, no_lines), KernelChoice::kInterpreter) << "nothing to carry";
    EXPECT_EQ(chooseKernel(shape.kind, 4 * kKernelChoiceMiB, 2, hostStagedKernelPolicy(policy, 2)),
              KernelChoice::kInterpreter)
        << "host memory: the interpreter below the host threshold";
    EXPECT_EQ(chooseKernel(shape.kind, kDefaultHostPushCollectiveMinBytes, 2, hostStagedKernelPolicy(policy, 2)),
              shape.pushed)
        << "host memory: pushed from the host threshold";
    KernelPolicy pull_host = policy;
    pull_host.push_host = false;
    EXPECT_EQ(chooseKernel(shape.kind, 256 * kKernelChoiceMiB, 2, hostStagedKernelPolicy(pull_host, 2)),
              KernelChoice::kInterpreter)
        << "PEERREDUCE_GPU_PUSH_HOST=0";
    EXPECT_EQ(chooseKernel(shape.kind, 3 * kKernelChoiceMiB, 2, hostStagedKernelPolicy(set->kernels, 2)), shape.pushed)
        << "a given threshold holds in host memory too";
    KernelPolicy interpreter;
    interpreter.fused = false;
    EXPECT_EQ(chooseKernel(shape.kind, 4 * kKernelChoiceMiB, 2, interpreter), KernelChoice::kInterpreter);
    EXPECT_TRUE(runsPushed(shape.pushed));
    EXPECT_FALSE(runsAsLines(shape.pushed));
    EXPECT_EQ(launchBlocks(shape.pushed, 64 * kKernelChoiceMiB, 132, 32 * kKernelChoiceKiB, 8 * kKernelChoiceKiB), 132)
        << "no launch-wide synchronisation: every multiprocessor";
  }
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4 * kKernelChoiceMiB, 2, off->kernels), KernelChoice::kOneShotPush)
      << "the allreduce's pushing has its own setting";
  for (KernelChoice other : {KernelChoice::kInterpreter, KernelChoice::kOneShotPull, KernelChoice::kTwoShotPull,
                             KernelChoice::kOneShotLines, KernelChoice::kAllGatherLines}) {
    EXPECT_FALSE(runsPushed(other));
  }
  EXPECT_TRUE(runsPushed(KernelChoice::kOneShotPush));
  EXPECT_TRUE(runsPushed(KernelChoice::kTwoShotPush));
}

// Streaming through the scratch (PEERREDUCE_GPU_PUSH_STREAM, on by default since measured): only the two-rank
// pushing one-shot and collectives, and only where every block's share of the scratch holds two pieces of the
// streamed size (PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES), so a block can push one while the peer takes the one
// before; the settings parse strictly.
// Past two ranks (PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS) reduce-scatter, all-gather and broadcast (relayed)
// push up to the setting's world; they run only streamed, each sender in a part of the receiver's ring, so a block's
// share of a part need only hold two vectors; without a ring (streaming off, or too little scratch) they run in the
// interpreter.
TEST(KernelChoice, PastTwoRanksTheDirectCollectivesPushUpToTheSettingsWorldAndOnlyStreamed) {
  EXPECT_EQ(KernelPolicy{}.push_collective_max_ranks, 2);
  auto four = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS" ? "4" : nullptr;
  });
  ASSERT_TRUE(four.isOk()) << four.status().toString();
  const KernelPolicy& policy = four->kernels;
  EXPECT_EQ(policy.push_collective_max_ranks, 4);
  for (int n : {3, 4}) {
    EXPECT_EQ(chooseKernel(FusedKind::kReduceScatterDirect, 4 * kKernelChoiceMiB, n, policy),
              KernelChoice::kReduceScatterPush);
    EXPECT_EQ(chooseKernel(FusedKind::kAllGatherDirect, 4 * kKernelChoiceMiB, n, policy), KernelChoice::kAllGatherPush);
    EXPECT_EQ(chooseKernel(FusedKind::kBroadcastDirect, 4 * kKernelChoiceMiB, n, policy), KernelChoice::kBroadcastPush)
        << "relayed";
    EXPECT_TRUE(streamsOnly(KernelChoice::kBroadcastPush, n));
    EXPECT_TRUE(streamsOnly(KernelChoice::kAllGatherPush, n));
    EXPECT_TRUE(streamsOnly(KernelChoice::kReduceScatterPush, n));
    EXPECT_FALSE(streamsOnly(KernelChoice::kInterpreter, n));
    EXPECT_FALSE(streamsOnly(KernelChoice::kTwoShotPush, n)) << "its slots are the plan's";
  }
  EXPECT_EQ(chooseKernel(FusedKind::kAllGatherDirect, 4 * kKernelChoiceMiB, 5, policy), KernelChoice::kInterpreter)
      << "beyond the setting's world";
  EXPECT_EQ(chooseKernel(FusedKind::kAllGatherDirect, 4 * kKernelChoiceMiB, 2, policy), KernelChoice::kAllGatherPush);
  EXPECT_FALSE(streamsOnly(KernelChoice::kAllGatherPush, 2)) << "two ranks keep their unstreamed form";
  EXPECT_FALSE(streamsOnly(KernelChoice::kBroadcastPush, 2));
  // A 32 MiB lease at four ranks: three parts of 10.67 MiB, 132 blocks' shares of 82 KiB each stream (the
  // ring halves the 64 KiB pieces to fit), and down to two vectors a share.
  EXPECT_TRUE(streamsPieces(KernelChoice::kAllGatherPush, policy, 32 * kKernelChoiceMiB, 132, 4));
  EXPECT_FALSE(streamsPieces(KernelChoice::kAllGatherPush, policy, 132 * 128 * kKernelChoiceKiB - 16, 132, 2))
      << "two ranks ask two whole pieces a block: 16.5 MiB at 132 blocks";
  EXPECT_TRUE(streamsPieces(KernelChoice::kAllGatherPush, policy, 132 * 128 * kKernelChoiceKiB - 16, 132, 4));
  EXPECT_TRUE(streamsPieces(KernelChoice::kReduceScatterPush, policy, 3 * 132 * 32, 132, 4));
  EXPECT_FALSE(streamsPieces(KernelChoice::kReduceScatterPush, policy, 3 * 132 * 32 - 16, 132, 4));
  KernelPolicy unstreamed = policy;
  unstreamed.push_stream = false;
  EXPECT_FALSE(streamsPieces(KernelChoice::kAllGatherPush, unstreamed, 32 * kKernelChoiceMiB, 132, 4));
  for (const char* bad : {"1", "65", "many"}) {
    auto refused = gpuSettingsFromEnvironment([bad](const char* name) -> const char* {
      return std::string(name) == "PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS" ? bad : nullptr;
    });
    ASSERT_FALSE(refused.isOk()) << bad;
    EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find("PEERREDUCE_GPU_PUSH_COLLECTIVE_MAX_RANKS"), std::string::npos)
        << refused.status().message();
  }
}

TEST(KernelChoice, OnlyThePushingPiecesStreamAndOnlyWhereEveryBlockHoldsTwo) {
  EXPECT_TRUE(KernelPolicy{}.push_stream) << "on by default";
  EXPECT_EQ(KernelPolicy{}.push_stream_piece_bytes, 64 * kKernelChoiceKiB);
  const KernelPolicy on;
  KernelPolicy off;
  off.push_stream = false;
  const std::uint64_t scratch = 32 * kKernelChoiceMiB;
  for (KernelChoice pieced : {KernelChoice::kOneShotPush, KernelChoice::kReduceScatterPush,
                              KernelChoice::kAllGatherPush, KernelChoice::kBroadcastPush}) {
    EXPECT_TRUE(streamsPieces(pieced, on, scratch, 132, 2));
    EXPECT_FALSE(streamsPieces(pieced, off, scratch, 132, 2)) << "the setting off";
    EXPECT_FALSE(streamsPieces(pieced, on, scratch, 0, 2)) << "no blocks";
    // 132 blocks x two 64 KiB pieces: 16.5 MiB is the least that streams.
    EXPECT_TRUE(streamsPieces(pieced, on, 132 * 128 * kKernelChoiceKiB, 132, 2));
    EXPECT_FALSE(streamsPieces(pieced, on, 132 * 128 * kKernelChoiceKiB - 16, 132, 2));
  }
  // The unstreamed pieces' setting does not move the streamed ones.
  KernelPolicy small_unstreamed = on;
  small_unstreamed.push_one_shot_piece_bytes = 16;
  EXPECT_FALSE(streamsPieces(KernelChoice::kOneShotPush, small_unstreamed, 132 * 128 * kKernelChoiceKiB - 16, 132, 2));
  for (KernelChoice other : {KernelChoice::kInterpreter, KernelChoice::kOneShotPull, KernelChoice::kTwoShotPull,
                             KernelChoice::kTwoShotPush, KernelChoice::kOneShotLines, KernelChoice::kAllGatherLines}) {
    EXPECT_FALSE(streamsPieces(other, on, scratch, 132, 2)) << "no ring in its protocol";
  }
  KernelPolicy one_vector = on;
  one_vector.push_stream_piece_bytes = 16;
  EXPECT_TRUE(streamsPieces(KernelChoice::kOneShotPush, one_vector, 132 * 32, 132, 2)) << "two vectors a block";
  EXPECT_FALSE(streamsPieces(KernelChoice::kOneShotPush, one_vector, 132 * 32 - 16, 132, 2));
  KernelPolicy whole = on;
  whole.push_stream_piece_bytes = 0;  // half a block's region
  EXPECT_TRUE(streamsPieces(KernelChoice::kOneShotPush, whole, 132 * 32, 132, 2));

  auto set = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_PUSH_STREAM" ? "0" : nullptr;
  });
  ASSERT_TRUE(set.isOk()) << set.status().toString();
  EXPECT_FALSE(set->kernels.push_stream);
  auto bad = gpuSettingsFromEnvironment([](const char* name) -> const char* {
    return std::string(name) == "PEERREDUCE_GPU_PUSH_STREAM" ? "sometimes" : nullptr;
  });
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("PEERREDUCE_GPU_PUSH_STREAM"), std::string::npos) << bad.status().message();
  const auto piece = [](const char* value) {
    return gpuSettingsFromEnvironment([value](const char* name) -> const char* {
      return std::string(name) == "PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES" ? value : nullptr;
    });
  };
  auto pieces = piece("32K");
  ASSERT_TRUE(pieces.isOk()) << pieces.status().toString();
  EXPECT_EQ(pieces->kernels.push_stream_piece_bytes, 32 * kKernelChoiceKiB);
  EXPECT_EQ(pieces->kernels.push_one_shot_piece_bytes, 32 * kKernelChoiceKiB) << "its own setting";
  auto bad_piece = piece("big");
  ASSERT_FALSE(bad_piece.isOk());
  EXPECT_EQ(bad_piece.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_piece.status().message().find("PEERREDUCE_GPU_PUSH_STREAM_PIECE_BYTES"), std::string::npos)
      << bad_piece.status().message();
}

// The pushing one-shot's pieces: 32 KiB by default (one pass of a block), the setting moves them, 0 means
// one piece a block, and a size that is not one is refused naming the setting.
TEST(KernelChoice, PushOneShotPiecesComeFromTheirSetting) {
  EXPECT_EQ(KernelPolicy{}.push_one_shot_piece_bytes, 32 * kKernelChoiceKiB);
  const auto with = [](const char* value) {
    return gpuSettingsFromEnvironment([value](const char* name) -> const char* {
      return std::string(name) == "PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES" ? value : nullptr;
    });
  };
  auto one = with("0");
  ASSERT_TRUE(one.isOk()) << one.status().toString();
  EXPECT_EQ(one->kernels.push_one_shot_piece_bytes, 0u);
  auto set = with("64K");
  ASSERT_TRUE(set.isOk()) << set.status().toString();
  EXPECT_EQ(set->kernels.push_one_shot_piece_bytes, 64 * kKernelChoiceKiB);
  auto bad = with("lots");
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("PEERREDUCE_GPU_PUSH_ONE_SHOT_PIECE_BYTES"), std::string::npos)
      << bad.status().toString();
}

TEST(KernelChoice, TwoShotProgramsRunAsLinesPulledOrPushedBySize) {
  KernelPolicy policy;
  EXPECT_EQ(policy.max_two_shot_bytes, 1 * kKernelChoiceMiB) << "two-shot lines up to 1 MiB by default";
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 512 * kKernelChoiceKiB, 4, policy), KernelChoice::kTwoShotLines);
  policy.max_two_shot_bytes = 0;  // off
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 512 * kKernelChoiceKiB, 4, policy), KernelChoice::kTwoShotPull);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, policy.push_min_bytes - 1, 4, policy), KernelChoice::kTwoShotPull);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, policy.push_min_bytes, 4, policy), KernelChoice::kTwoShotPush);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 256 * kKernelChoiceMiB, 4, policy), KernelChoice::kTwoShotPush);
  policy.max_two_shot_bytes = 1 * kKernelChoiceMiB;
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 512 * kKernelChoiceKiB, 4, policy), KernelChoice::kTwoShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 1 * kKernelChoiceMiB, 4, policy), KernelChoice::kTwoShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 1 * kKernelChoiceMiB + 16, 4, policy), KernelChoice::kTwoShotPull);
  // 4 ranks: 49 bytes are 4 vectors (one per rank), 48 bytes only 3.
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 49, 4, policy), KernelChoice::kTwoShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 48, 4, policy), KernelChoice::kTwoShotPull);
  policy.max_two_shot_bytes = std::uint64_t{1} << 30;
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, lineTwoShotPayloadBytes(8), 8, policy), KernelChoice::kTwoShotLines);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, lineTwoShotPayloadBytes(8) + 1, 8, policy), KernelChoice::kTwoShotPull);
  policy.push_min_bytes = 0;
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 256 * kKernelChoiceMiB, 4, policy), KernelChoice::kTwoShotPull)
      << "pushing off";
}

TEST(KernelChoice, OtherProgramsAndTheFusedSwitchGoToTheInterpreter) {
  KernelPolicy policy;
  EXPECT_EQ(chooseKernel(FusedKind::kNone, 4096, 4, policy), KernelChoice::kInterpreter);
  EXPECT_EQ(chooseKernel(FusedKind::kNone, 64 * kKernelChoiceMiB, 4, policy), KernelChoice::kInterpreter);
  policy.fused = false;
  EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 4096, 4, policy), KernelChoice::kInterpreter);
  EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, 64 * kKernelChoiceMiB, 4, policy), KernelChoice::kInterpreter);
}

// The direct plans of reduce-scatter, all-gather and broadcast run as their line kernels while one rank's
// block fits the setting and a writer's lines, and in the interpreter otherwise (no pulling kernel of
// their own: it would repeat the interpreter's launch, signal round and copies).
TEST(KernelChoice, DirectCollectivesRunAsTheirLinesWithinBothLimitsElseInterpreted) {
  const struct {
    FusedKind kind;
    KernelChoice lines;
  } shapes[] = {{FusedKind::kReduceScatterDirect, KernelChoice::kReduceScatterLines},
                {FusedKind::kAllGatherDirect, KernelChoice::kAllGatherLines},
                {FusedKind::kBroadcastDirect, KernelChoice::kBroadcastLines}};
  for (const auto& shape : shapes) {
    const KernelPolicy policy;
    EXPECT_EQ(policy.collective_max_bytes, 512 * kKernelChoiceKiB);
    EXPECT_EQ(chooseKernel(shape.kind, 1, 4, policy), shape.lines);
    EXPECT_EQ(chooseKernel(shape.kind, policy.collective_max_bytes, 4, policy), shape.lines);
    EXPECT_EQ(chooseKernel(shape.kind, policy.collective_max_bytes + 1, 4, policy), KernelChoice::kInterpreter);
    EXPECT_EQ(chooseKernel(shape.kind, 0, 4, policy), KernelChoice::kInterpreter) << "nothing to carry";
    EXPECT_EQ(chooseKernel(shape.kind, 4096, 1, policy), KernelChoice::kInterpreter) << "no peer";
    KernelPolicy generous;
    generous.collective_max_bytes = std::uint64_t{1} << 30;
    EXPECT_EQ(chooseKernel(shape.kind, linePayloadBytes(64), 64, generous), shape.lines);
    EXPECT_EQ(chooseKernel(shape.kind, linePayloadBytes(64) + 1, 64, generous), KernelChoice::kInterpreter)
        << "a writer's lines bind before the setting";
    KernelPolicy off;
    off.collective_max_bytes = 0;
    EXPECT_EQ(chooseKernel(shape.kind, 16, 4, off), KernelChoice::kInterpreter);
    KernelPolicy interpreter;
    interpreter.fused = false;
    EXPECT_EQ(chooseKernel(shape.kind, 16, 4, interpreter), KernelChoice::kInterpreter);
    // The allreduce settings do not reach these collectives, and theirs does not reach allreduce.
    KernelPolicy allreduce_off;
    allreduce_off.max_bytes = 0;
    allreduce_off.max_two_shot_bytes = 0;
    EXPECT_EQ(chooseKernel(shape.kind, 16, 4, allreduce_off), shape.lines);
    EXPECT_EQ(chooseKernel(FusedKind::kOneShot, 16, 4, off), KernelChoice::kOneShotLines);
    EXPECT_EQ(maxBatchBytes(shape.kind, 4, policy), 0u) << "batches are allreduces";
    EXPECT_TRUE(runsAsLines(shape.lines)) << "split by line bytes per block, every multiprocessor";
  }
  for (KernelChoice pulled : {KernelChoice::kInterpreter, KernelChoice::kOneShotPull, KernelChoice::kTwoShotPull,
                              KernelChoice::kTwoShotPush}) {
    EXPECT_FALSE(runsAsLines(pulled));
  }
}

// The tuning settings from the environment: unset keeps defaults; every variable parsed strictly, and
// anything else is kInvalidArgument naming the variable and the value.
TEST(GpuSettings, DefaultsWhenUnsetValuesWhenSetAndTypedErrorsOtherwise) {
  const auto from = [](std::map<std::string, std::string> env) {
    return gpuSettingsFromEnvironment([env](const char* name) -> const char* {
      auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    });
  };
  auto defaults = from({{"PEERREDUCE_GPU_FUSED", ""}});
  ASSERT_TRUE(defaults.isOk()) << defaults.status().toString();
  EXPECT_EQ(defaults->max_blocks, 0);
  EXPECT_EQ(defaults->bytes_per_block, 32 * kKernelChoiceKiB);
  EXPECT_EQ(defaults->line_bytes_per_block, 8 * kKernelChoiceKiB);
  EXPECT_TRUE(defaults->kernels.fused);
  EXPECT_TRUE(defaults->kernels.overlap_launch);
  EXPECT_EQ(defaults->kernels.max_bytes, kDefaultLowLatencyMaxBytes);
  EXPECT_EQ(defaults->kernels.push_min_bytes, kDefaultPushMinBytes);
  EXPECT_EQ(defaults->kernels.collective_max_bytes, kDefaultCollectiveLinesMaxBytes);
  EXPECT_FALSE(defaults->kernels.copy_engines) << "copy engines are opt-in";
  EXPECT_EQ(defaults->kernels.interpreter_max_blocks, kDefaultInterpreterMaxBlocks);
  EXPECT_EQ(defaults->kernels.pull_max_blocks, kDefaultMaxBlocks);

  auto set = from({{"PEERREDUCE_GPU_MAX_BLOCKS", "132"},
                   {"PEERREDUCE_GPU_INTERPRETER_MAX_BLOCKS", "96"},
                   {"PEERREDUCE_GPU_PULL_MAX_BLOCKS", "120"},
                   {"PEERREDUCE_GPU_BYTES_PER_BLOCK", "64K"},
                   {"PEERREDUCE_GPU_LL_BYTES_PER_BLOCK", "2048"},
                   {"PEERREDUCE_GPU_FUSED", "0"},
                   {"PEERREDUCE_GPU_OVERLAP", "0"},
                   {"PEERREDUCE_GPU_LL_MAX_BYTES", "0"},
                   {"PEERREDUCE_GPU_LL2_MAX_BYTES", "1M"},
                   {"PEERREDUCE_GPU_PUSH_MIN_BYTES", "4MiB"},
                   {"PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES", "16K"},
                   {"PEERREDUCE_GPU_COPY_ENGINES", "1"}});
  ASSERT_TRUE(set.isOk()) << set.status().toString();
  EXPECT_EQ(set->max_blocks, 132);
  EXPECT_EQ(set->kernels.interpreter_max_blocks, 96);
  EXPECT_EQ(set->kernels.pull_max_blocks, 120);
  EXPECT_EQ(set->bytes_per_block, 64 * kKernelChoiceKiB);
  EXPECT_EQ(set->line_bytes_per_block, 2048u);
  EXPECT_FALSE(set->kernels.fused);
  EXPECT_FALSE(set->kernels.overlap_launch);
  EXPECT_EQ(set->kernels.max_bytes, 0u);
  EXPECT_EQ(set->kernels.max_two_shot_bytes, 1 * kKernelChoiceMiB);
  EXPECT_EQ(set->kernels.push_min_bytes, 4 * kKernelChoiceMiB);
  EXPECT_EQ(set->kernels.collective_max_bytes, 16 * kKernelChoiceKiB);
  EXPECT_TRUE(set->kernels.copy_engines);

  const std::vector<std::pair<std::string, std::string>> bad = {{"PEERREDUCE_GPU_MAX_BLOCKS", "0"},
                                                                {"PEERREDUCE_GPU_MAX_BLOCKS", "257"},
                                                                {"PEERREDUCE_GPU_MAX_BLOCKS", "many"},
                                                                {"PEERREDUCE_GPU_INTERPRETER_MAX_BLOCKS", "0"},
                                                                {"PEERREDUCE_GPU_INTERPRETER_MAX_BLOCKS", "257"},
                                                                {"PEERREDUCE_GPU_PULL_MAX_BLOCKS", "0"},
                                                                {"PEERREDUCE_GPU_PULL_MAX_BLOCKS", "257"},
                                                                {"PEERREDUCE_GPU_PULL_MAX_BLOCKS", "all"},
                                                                {"PEERREDUCE_GPU_FUSED", "2"},
                                                                {"PEERREDUCE_GPU_FUSED", "yes"},
                                                                {"PEERREDUCE_GPU_BYTES_PER_BLOCK", "512"},
                                                                {"PEERREDUCE_GPU_LL_BYTES_PER_BLOCK", "8Q"},
                                                                {"PEERREDUCE_GPU_LL_MAX_BYTES", "-1"},
                                                                {"PEERREDUCE_GPU_LL2_MAX_BYTES", "lots"},
                                                                {"PEERREDUCE_GPU_PUSH_MIN_BYTES", "2X"},
                                                                {"PEERREDUCE_GPU_LL_COLLECTIVE_MAX_BYTES", "1.5M"},
                                                                {"PEERREDUCE_GPU_COPY_ENGINES", "maybe"},
                                                                {"PEERREDUCE_GPU_OVERLAP", "on"}};
  for (const auto& [name, value] : bad) {
    auto refused = from({{name, value}});
    ASSERT_FALSE(refused.isOk()) << name << "=" << value;
    EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << refused.status().toString();
    const std::string message = refused.status().toString();
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find(value), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace peerreduce::gpu

namespace peerreduce::gpu {
namespace {

// A batch of maxBatchBytes runs as one low-latency launch of its shape, and nothing larger is offered;
// without lines of that shape, peers or a fused shape there are no batches.
TEST(KernelChoice, TheBatchCapacityIsWhatRunsAsLinesOfItsShape) {
  for (int world : {2, 3, 4, 8, 16, 64}) {
    const KernelPolicy policy;
    const std::uint64_t one = maxBatchBytes(FusedKind::kOneShot, world, policy);
    ASSERT_GT(one, 0u) << world;
    EXPECT_EQ(one % 16, 0u);
    EXPECT_LE(one, oneShotLinesMaxBytes(policy, world));
    EXPECT_EQ(chooseKernel(FusedKind::kOneShot, one, world, policy), KernelChoice::kOneShotLines) << world;
    const std::uint64_t two = maxBatchBytes(FusedKind::kTwoShot, world, policy);
    ASSERT_GT(two, 0u) << world;
    EXPECT_EQ(two % 16, 0u);
    EXPECT_LE(two, policy.max_two_shot_bytes);
    EXPECT_EQ(chooseKernel(FusedKind::kTwoShot, two, world, policy), KernelChoice::kTwoShotLines) << world;
  }
  EXPECT_EQ(maxBatchBytes(FusedKind::kTwoShot, 4, KernelPolicy{}), 1u << 20);
  KernelPolicy off;
  off.max_bytes = 0;
  off.max_two_shot_bytes = 0;
  EXPECT_EQ(maxBatchBytes(FusedKind::kOneShot, 4, off), 0u);
  EXPECT_EQ(maxBatchBytes(FusedKind::kTwoShot, 4, off), 0u);
  KernelPolicy interpreter;
  interpreter.fused = false;
  EXPECT_EQ(maxBatchBytes(FusedKind::kOneShot, 4, interpreter), 0u);
  EXPECT_EQ(maxBatchBytes(FusedKind::kNone, 4, KernelPolicy{}), 0u);
  EXPECT_EQ(maxBatchBytes(FusedKind::kOneShot, 1, KernelPolicy{}), 0u);
  KernelPolicy tiny;
  tiny.max_two_shot_bytes = 48;  // fewer vectors than ranks: no two-shot of lines at all
  EXPECT_EQ(maxBatchBytes(FusedKind::kTwoShot, 4, tiny), 0u);
}

// The grid of a launch: one block per bytes-per-block (the line kernels' own size), at least one, the
// fused pulling kernels at most kDefaultMaxBlocks, the interpreter, push and line kernels up to the agreed cap.
TEST(KernelChoice, LaunchBlocksFollowTheBytesUpToTheKernelsCap) {
  constexpr std::uint64_t kPerBlock = 32 * kKernelChoiceKiB;
  constexpr std::uint64_t kLinePerBlock = 2 * kKernelChoiceKiB;
  EXPECT_EQ(launchBlocks(KernelChoice::kInterpreter, 0, 132, kPerBlock, kLinePerBlock), 1);
  EXPECT_EQ(launchBlocks(KernelChoice::kInterpreter, 1, 132, kPerBlock, kLinePerBlock), 1);
  EXPECT_EQ(launchBlocks(KernelChoice::kOneShotPull, 3 * kPerBlock + 1, 132, kPerBlock, kLinePerBlock), 4)
      << "rounds up";
  EXPECT_EQ(launchBlocks(KernelChoice::kTwoShotPull, 64 * kKernelChoiceMiB, 132, kPerBlock, kLinePerBlock),
            kDefaultMaxBlocks);
  EXPECT_EQ(launchBlocks(KernelChoice::kInterpreter, 64 * kKernelChoiceMiB, 16, kPerBlock, kLinePerBlock), 16)
      << "an agreed cap below the default";
  EXPECT_EQ(launchBlocks(KernelChoice::kTwoShotPush, 4 * kKernelChoiceMiB, 132, kPerBlock, kLinePerBlock), 128);
  EXPECT_EQ(launchBlocks(KernelChoice::kTwoShotPush, 64 * kKernelChoiceMiB, 132, kPerBlock, kLinePerBlock), 132);
  EXPECT_EQ(launchBlocks(KernelChoice::kOneShotLines, 64 * kKernelChoiceKiB, 132, kPerBlock, kLinePerBlock), 32)
      << "the line kernels' bytes per block";
  EXPECT_EQ(launchBlocks(KernelChoice::kTwoShotLines, 1 * kKernelChoiceMiB, 132, kPerBlock, kLinePerBlock), 132);
  for (const KernelChoice lines :
       {KernelChoice::kReduceScatterLines, KernelChoice::kAllGatherLines, KernelChoice::kBroadcastLines}) {
    EXPECT_EQ(launchBlocks(lines, 64 * kKernelChoiceKiB, 132, kPerBlock, kLinePerBlock), 32)
        << "the collectives' line kernels use the line bytes per block";
    EXPECT_EQ(launchBlocks(lines, 8 * kKernelChoiceMiB, 132, kPerBlock, kLinePerBlock), 132)
        << "and are not capped at 32";
  }
  EXPECT_EQ(launchBlocks(KernelChoice::kTwoShotLines, 1 * kKernelChoiceMiB, 0, kPerBlock, kLinePerBlock), 1)
      << "no cap: one";
  EXPECT_EQ(launchBlocks(KernelChoice::kInterpreter, 5, 132, 0, 0), 5) << "zero bytes per block counts as one";
}

// PEERREDUCE_GPU_INTERPRETER_MAX_BLOCKS moves the plan interpreter's cap (by default the agreed cap: every
// multiprocessor), never above the agreed cap, and leaves the fused pulls (kDefaultMaxBlocks), the push
// and the line kernels alone.
TEST(KernelChoice, InterpreterCapBoundsTheInterpreterOnly) {
  constexpr std::uint64_t kPerBlock = 32 * kKernelChoiceKiB;
  constexpr std::uint64_t kLinePerBlock = 8 * kKernelChoiceKiB;
  EXPECT_EQ(launchBlocks(KernelChoice::kInterpreter, 64 * kKernelChoiceMiB, 132, kPerBlock, kLinePerBlock), 132)
      << "by default the interpreter uses the agreed cap";
  EXPECT_EQ(launchBlocks(KernelChoice::kInterpreter, 64 * kKernelChoiceMiB, 132, kPerBlock, kLinePerBlock, 96), 96);
  EXPECT_EQ(launchBlocks(KernelChoice::kInterpreter, 64 * kKernelChoiceMiB, 100, kPerBlock, kLinePerBlock, 200), 100)
      << "never above the agreed cap";
  EXPECT_EQ(launchBlocks(KernelChoice::kInterpreter, 64 * kKernelChoiceKiB, 132, kPerBlock, kLinePerBlock, 96), 2)
      << "still one block per bytes-per-block";
  for (const KernelChoice pull : {KernelChoice::kOneShotPull, KernelChoice::kTwoShotPull}) {
    EXPECT_EQ(launchBlocks(pull, 64 * kKernelChoiceMiB, 132, kPerBlock, kLinePerBlock, 96), kDefaultMaxBlocks)
        << "the fused pulls keep their own cap";
  }
  EXPECT_EQ(launchBlocks(KernelChoice::kTwoShotPush, 64 * kKernelChoiceMiB, 132, kPerBlock, kLinePerBlock, 8), 132);
  EXPECT_EQ(launchBlocks(KernelChoice::kTwoShotLines, 8 * kKernelChoiceMiB, 132, kPerBlock, kLinePerBlock, 8), 132);
}

// PEERREDUCE_GPU_PULL_MAX_BLOCKS moves the fused pulls' cap (kDefaultMaxBlocks by default), never above
// the agreed cap, and leaves the interpreter, the push and the line kernels alone.
TEST(KernelChoice, PullCapBoundsTheFusedPullsOnly) {
  constexpr std::uint64_t kPerBlock = 32 * kKernelChoiceKiB;
  constexpr std::uint64_t kLinePerBlock = 8 * kKernelChoiceKiB;
  constexpr std::uint64_t kBig = 64 * kKernelChoiceMiB;
  for (const KernelChoice pull : {KernelChoice::kOneShotPull, KernelChoice::kTwoShotPull}) {
    EXPECT_EQ(launchBlocks(pull, kBig, 132, kPerBlock, kLinePerBlock), kDefaultMaxBlocks) << "by default";
    EXPECT_EQ(launchBlocks(pull, kBig, 132, kPerBlock, kLinePerBlock, kDefaultInterpreterMaxBlocks, 120), 120);
    EXPECT_EQ(launchBlocks(pull, kBig, 100, kPerBlock, kLinePerBlock, kDefaultInterpreterMaxBlocks, 200), 100)
        << "never above the agreed cap";
    EXPECT_EQ(
        launchBlocks(pull, 64 * kKernelChoiceKiB, 132, kPerBlock, kLinePerBlock, kDefaultInterpreterMaxBlocks, 120), 2)
        << "still one block per bytes-per-block";
  }
  EXPECT_EQ(launchBlocks(KernelChoice::kInterpreter, kBig, 132, kPerBlock, kLinePerBlock, 96, 8), 96)
      << "the interpreter keeps its own cap";
  EXPECT_EQ(launchBlocks(KernelChoice::kTwoShotPush, kBig, 132, kPerBlock, kLinePerBlock, 96, 8), 132);
  EXPECT_EQ(launchBlocks(KernelChoice::kOneShotLines, kBig, 132, kPerBlock, kLinePerBlock, 96, 8), 132);
}

// Launches overlap only when the code that runs has the grid-dependency wait: a build that JIT-compiles
// older PTX (compute_75 on Hopper, the CUDA build before it targeted sm_90) must launch normally.
TEST(KernelChoice, LaunchesOverlapOnlyWhenTheRunningCodeHasTheGridDependencyWait) {
  EXPECT_TRUE(launchesMayOverlap(true, kGridDependencyPtxVersion));
  EXPECT_TRUE(launchesMayOverlap(true, 100));
  EXPECT_FALSE(launchesMayOverlap(true, 75)) << "JIT-compiled compute_75 code has no wait";
  EXPECT_FALSE(launchesMayOverlap(true, 89));
  EXPECT_FALSE(launchesMayOverlap(true, -1)) << "unknown (HIP, or the query failed): ordinary launches";
  EXPECT_FALSE(launchesMayOverlap(false, 90)) << "PEERREDUCE_GPU_OVERLAP=0";
}

}  // namespace
}  // namespace peerreduce::gpu
