// Hardware-only: access probes that fail at creation. The hardware stage runs this suite with
// PEERREDUCE_GPU_FAULT_PROBE_PAIRS set (one pair, and all), which fails the probe of those pairs' device
// mappings as a broken peer-to-peer path would: the ranks must agree on the pairs, fall back to
// host-staged links for them and exchange again, so the agreed topology names exactly those pairs
// host-staged (beside any the runtime or the mask made so), the ranks in them hold their region in one
// pinned block, and every result is exact. A pinned pool too small for the re-placed region fails
// creation with a typed error. Without the setting nothing falls back and the same checks hold.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "gpu/probe_fault.h"
#include "shared_names.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

std::vector<std::uint8_t> faultedPairs(int size) {
  const char* text = std::getenv("PEERREDUCE_GPU_FAULT_PROBE_PAIRS");
  auto pairs = gpu::parseProbeFaultPairs(text == nullptr ? "" : text, size);
  EXPECT_TRUE(pairs.isOk()) << pairs.status().toString();
  return pairs.isOk() ? *pairs : std::vector<std::uint8_t>{};
}

float inputValue(int rank, std::size_t i) { return static_cast<float>((rank + 2) * 5 + static_cast<int>(i % 17)); }

TEST(ProbeFallbackHw, FailedProbesBecomeHostStagedLinksOnEveryRankAndResultsStayExact) {
  WorldProvider& provider = worldProvider();
  ASSERT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  Config config;  // the stage's mask, if any, comes from the environment
  auto world = provider.acquire(provider.fixedWorldSize(), config, 1);
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  TestWorld& w = **world;
  const int n = w.size();
  const std::vector<std::uint8_t> pairs = faultedPairs(n);
  const int rank = w.localRanks().front();
  Communicator& comm = w.comm(rank);
  const Topology& topology = comm.topology();
  bool own_pair = false;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (pairs.empty() || pairs[static_cast<std::size_t>(a * n + b)] == 0) continue;
      EXPECT_EQ(topology.link(a, b).link_class, LinkClass::kHostStaged)
          << a << "-" << b << " fell back: " << topology.describe();
      own_pair = own_pair || a == rank;
    }
  }
  if (own_pair) {
    EXPECT_EQ(comm.pinnedStats().blocks_in_use, 1u) << "the re-placed region is one pinned block";
  }
  EXPECT_EQ(sharedNamesOfThisProcess(), 0u) << "no name is left by the first region or the re-placed one";
  for (const std::size_t count : {std::size_t{1} << 10, std::size_t{1} << 20}) {
    auto send = w.allocate(count * sizeof(float));
    auto recv = w.allocate(count * sizeof(float));
    std::vector<float> host(count);
    for (std::size_t i = 0; i < count; ++i) host[i] = inputValue(rank, i);
    send->upload(host.data(), 0, count * sizeof(float));
    const Status st =
        comm.allreduce(send->data(), recv->data(), count, DataType::kFloat32, ReduceOp::kSum, w.stream(rank));
    ASSERT_TRUE(st.isOk()) << st.toString();
    ASSERT_TRUE(w.completeAll().isOk());
    recv->download(host.data(), 0, count * sizeof(float));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) {
      float expected = 0;
      for (int q = 0; q < n; ++q) expected += inputValue(q, i);
      wrong += host[i] == expected ? 0 : 1;
    }
    EXPECT_EQ(wrong, 0u) << count << " elements";
  }
  // Every rank agreed on the same links, so they hash alike.
  EXPECT_TRUE(w.allRanksEqual(std::hash<std::string>{}(topology.describe())));
  EXPECT_TRUE(w.allRanksAgree(true));
}

TEST(ProbeFallbackHw, APinnedPoolTooSmallForTheReplacedRegionFailsCreationWithATypedError) {
  WorldProvider& provider = worldProvider();
  ASSERT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  const std::vector<std::uint8_t> pairs = faultedPairs(provider.fixedWorldSize());
  Config config;
  config.memory.pinned_limit_bytes = kMinPinnedLimitBytes;  // far below the region
  auto world = provider.acquire(provider.fixedWorldSize(), config, 1);
  bool any_pair = false;
  for (const std::uint8_t p : pairs) any_pair = any_pair || p != 0;
  // Without failed probes nothing is re-placed (unless the mask or the runtime stages a pair: then the
  // first region needs the pool too and fails the same way).
  if (any_pair) {
    ASSERT_FALSE(world.isOk()) << "the re-placed region cannot fit " << kMinPinnedLimitBytes << " bytes";
  }
  if (world.isOk()) return;
  // The rank that could not take its region from the pool gets the pool's error, the others its name.
  const ErrorCode code = world.status().code();
  EXPECT_TRUE(code == ErrorCode::kOutOfMemory || code == ErrorCode::kUnavailable) << world.status().toString();
}

}  // namespace
}  // namespace peerreduce::testing
