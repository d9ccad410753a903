// Hardware-only: host-staged links on real GPUs. With every link masked host-staged (or the mask the
// hardware stage sets in PEERREDUCE_LINK_MASK, which wins), each rank whose pair is host-staged keeps its
// peer-reachable region in pinned host memory and its peers read and signal it through mapped pointers:
// every result must be exact at sizes that take lines and every pulling kernel, the agreed topology must name the
// pairs host-staged, the pinned pool must show the region and the traffic, and no shared-memory name may
// be left once every peer mapped it.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "portability.h"
#include "shared_names.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

float inputValue(int rank, std::size_t i) { return static_cast<float>((rank + 1) * 3 + static_cast<int>(i % 13)); }

TEST(HostStaged, EveryResultIsExactAndThePinnedPoolShowsTheRegionAndTheTraffic) {
  WorldProvider& provider = worldProvider();
  ASSERT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  Config config;
  config.link_mask = "host:all";
  auto world = provider.acquire(provider.fixedWorldSize(), config, 1);
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  TestWorld& w = **world;
  const int rank = w.localRanks().front();
  Communicator& comm = w.comm(rank);
  const Topology& topology = comm.topology();
  // A mixed mask (PEERREDUCE_LINK_MASK=host:0-1) leaves some ranks without a host-staged pair of their
  // own: they keep device memory but still read the host-placed regions of the others.
  bool any_staged = false;
  bool own_staged = false;
  for (int a = 0; a < w.size(); ++a) {
    for (int b = 0; b < w.size(); ++b) {
      const bool staged = a != b && topology.link(a, b).link_class == LinkClass::kHostStaged;
      any_staged = any_staged || staged;
      own_staged = own_staged || (staged && a == rank);
    }
  }
  ASSERT_TRUE(any_staged) << "no host-staged pair: " << topology.describe();
  EXPECT_EQ(sharedNamesOfThisProcess(), 0u) << "the region's name is removed once every peer mapped it";

  // 4 KiB (one-shot lines, PEERREDUCE_GPU_LL_HOST_MAX_BYTES), 1 MiB and 16 MiB (two-shot, segmented at the
  // largest): the line and the pulling kernels.
  std::size_t operations = 0;
  for (const std::size_t count : {std::size_t{1} << 10, std::size_t{1} << 18, std::size_t{1} << 22}) {
    auto send = w.allocate(count * sizeof(float));
    auto recv = w.allocate(count * sizeof(float));
    std::vector<float> host(count);
    for (std::size_t i = 0; i < count; ++i) host[i] = inputValue(rank, i);
    send->upload(host.data(), 0, count * sizeof(float));
    const PinnedStats before = comm.pinnedStats();
    const Status st =
        comm.allreduce(send->data(), recv->data(), count, DataType::kFloat32, ReduceOp::kSum, w.stream(rank));
    ASSERT_TRUE(st.isOk()) << st.toString();
    ASSERT_TRUE(w.completeAll().isOk());
    ++operations;
    recv->download(host.data(), 0, count * sizeof(float));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) {
      float expected = 0;
      for (int q = 0; q < w.size(); ++q) expected += inputValue(q, i);
      wrong += host[i] == expected ? 0 : 1;
    }
    EXPECT_EQ(wrong, 0u) << count << " elements";
    const PinnedStats after = comm.pinnedStats();
    // Every operation reads at least each host-placed peer's copy of the data once.
    EXPECT_GE(after.bytes_staged - before.bytes_staged, count * sizeof(float) / static_cast<std::size_t>(w.size()))
        << count << " elements";
    EXPECT_GT(after.staged_operations, before.staged_operations);
  }
  const PinnedStats stats = comm.pinnedStats();
  std::printf("host-staged: rank %d pinned %" PRIu64 " bytes (peak %" PRIu64 ", limit %" PRIu64 "), staged %" PRIu64
              " bytes in %" PRIu64 " operations\n",
              rank, stats.bytes_pinned, stats.peak_bytes_pinned, stats.limit_bytes, stats.bytes_staged,
              stats.staged_operations);
  EXPECT_GE(stats.staged_operations, operations);
  EXPECT_EQ(stats.blocks_in_use, own_staged ? 1u : 0u) << "a host-placed region is one pinned block";
  EXPECT_EQ(stats.failures, 0u);
  EXPECT_TRUE(w.allRanksAgree(true));
}

}  // namespace
}  // namespace peerreduce::testing
