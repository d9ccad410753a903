// Hardware-only: an allreduce captured into a CUDA/HIP graph stays correct on every replay, because
// its synchronisation state (flag counters, epoch bases) lives in device memory and advances inside
// the kernel. Each replay gets a new input, so a replay that reused stale data would be caught.
#include <gtest/gtest.h>

#include <vector>

#include "portability.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

constexpr int kGraphReplayReplays = 1000;
constexpr std::size_t kGraphReplayCount = 65536;  // 256 KiB of fp32: several blocks per kernel

float inputValue(int rank, int replay, std::size_t i) {
  return static_cast<float>((rank + 1) * (replay % 7 + 1) + static_cast<int>(i % 5));
}

TEST(GraphReplay, EveryReplayOfACapturedAllreduceIsCorrect) {
  WorldProvider& provider = worldProvider();
  ASSERT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  // The copy-engine two-shot captures copies on side streams, forked and joined by events.
  for (Algorithm algorithm :
       {Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing, Algorithm::kCopyEngineTwoShot}) {
    Config config;
    config.algorithm = algorithm;
    auto world = provider.acquire(provider.fixedWorldSize(), config, 1);
    ASSERT_TRUE(world.isOk()) << world.status().toString();
    TestWorld& w = **world;
    const int rank = w.localRanks().front();
    auto send = w.allocate(kGraphReplayCount * sizeof(float));
    auto recv = w.allocate(kGraphReplayCount * sizeof(float));
    hipStream_t stream;
    ASSERT_EQ(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), hipSuccess);
    hipGraph_t graph;
    hipGraphExec_t exec;
    ASSERT_EQ(hipStreamBeginCapture(stream, hipStreamCaptureModeThreadLocal), hipSuccess);
    const Status captured = w.comm(rank).allreduce(send->data(), recv->data(), kGraphReplayCount, DataType::kFloat32,
                                                   ReduceOp::kSum, stream);
    ASSERT_EQ(hipStreamEndCapture(stream, &graph), hipSuccess);
    ASSERT_TRUE(captured.isOk()) << captured.toString();
    ASSERT_EQ(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0), hipSuccess);
    std::vector<float> host(kGraphReplayCount);
    std::vector<float> out(kGraphReplayCount);
    int bad_replays = 0;
    for (int replay = 0; replay < kGraphReplayReplays; ++replay) {
      for (std::size_t i = 0; i < kGraphReplayCount; ++i) host[i] = inputValue(rank, replay, i);
      send->upload(host.data(), 0, kGraphReplayCount * sizeof(float));
      ASSERT_EQ(hipGraphLaunch(exec, stream), hipSuccess);
      ASSERT_EQ(hipStreamSynchronize(stream), hipSuccess);
      recv->download(out.data(), 0, kGraphReplayCount * sizeof(float));
      bool ok = true;
      for (std::size_t i = 0; i < kGraphReplayCount && ok; ++i) {
        float expected = 0;
        for (int r = 0; r < w.size(); ++r) expected += inputValue(r, replay, i);
        ok = out[i] == expected;
      }
      bad_replays += ok ? 0 : 1;
    }
    EXPECT_TRUE(w.comm(rank).asyncError().isOk()) << w.comm(rank).asyncError().toString();
    (void)hipGraphExecDestroy(exec);
    (void)hipGraphDestroy(graph);
    (void)hipStreamDestroy(stream);
    EXPECT_TRUE(w.allRanksAgree(bad_replays == 0)) << algorithmName(algorithm) << ": " << bad_replays << " of "
                                                   << kGraphReplayReplays << " replays wrong on rank " << rank;
  }
}

// A rank that never joins an allreduce makes every other rank's operation end with kTimeout, naming
// the rank and step, within the configured timeout: no rank hangs.
TEST(Timeouts, AStalledPeerEndsInATimeoutErrorOnEveryOtherRank) {
  WorldProvider& provider = worldProvider();
  ASSERT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  Config config;
  config.algorithm = Algorithm::kOneShot;
  config.timeout = std::chrono::milliseconds(2000);
  auto world = provider.acquire(provider.fixedWorldSize(), config, 2);
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  TestWorld& w = **world;
  const int rank = w.localRanks().front();
  const int stalled = w.size() - 1;
  auto buffer = w.allocate(1024 * sizeof(float));
  Status status;
  if (rank != stalled) {
    status = w.comm(rank).allreduce(buffer->data(), buffer->data(), 1024, DataType::kFloat32, ReduceOp::kSum);
    if (status.isOk()) status = w.comm(rank).synchronize();
  }
  const bool as_expected =
      rank == stalled || (status.code() == ErrorCode::kTimeout &&
                          status.message().find("rank " + std::to_string(stalled)) != std::string::npos);
  EXPECT_TRUE(as_expected) << "rank " << rank << ": " << status.toString();
  EXPECT_TRUE(w.allRanksAgree(as_expected));
}

}  // namespace
}  // namespace peerreduce::testing
