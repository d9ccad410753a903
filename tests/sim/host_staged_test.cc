// Host-staged links on the simulator (sim/engine_links.cc, LinkAdoption): a world without peer access
// (the link mask's host:all) runs every allreduce algorithm and every collective plan through pinned host
// memory with exact results, the simulated time equals the cost model's prediction, the communicator's
// pinned pool counts the traffic and its limit applies, and each refusal is a typed error.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "algorithms/algorithms.h"
#include "memory/pinned_host_pool.h"
#include "peerreduce/communicator.h"
#include "select/timing_model.h"
#include "sim/sim_cluster.h"
#include "sim_test_util.h"
#include "topology/generators.h"

namespace peerreduce::testing {
namespace {

Config hostStagedConfig(Algorithm algorithm, const char* mask = "host:all") {
  Config config;
  config.algorithm = algorithm;
  config.link_mask = mask;
  return config;
}

sim::SimOptions noPeerAccess(int n) {
  sim::SimOptions options;
  options.topology = Topology(n);  // the machine alone links nothing: only host memory joins the ranks
  return options;
}

// Rank r's element i is r + i, so the sum over n ranks is n*i + n(n-1)/2.
std::vector<std::int32_t> inputOf(int rank, std::size_t count) {
  std::vector<std::int32_t> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = rank + static_cast<std::int32_t>(i);
  return v;
}

std::uint64_t stagedBytes(sim::SimCluster& cluster) {
  std::uint64_t staged = 0;
  for (int r = 0; r < cluster.size(); ++r) staged += cluster.comm(r).pinnedStats().bytes_staged;
  return staged;
}

TEST(HostStaged, EveryAllreduceAlgorithmReducesThroughHostMemoryWithoutPeerAccess) {
  constexpr int n = 6;  // not a power of two: recursive doubling and rabenseifner fold
  constexpr std::size_t count = 5000;
  for (Algorithm algorithm : {Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing, Algorithm::kRecursiveDoubling,
                              Algorithm::kRabenseifner, Algorithm::kTree}) {
    SCOPED_TRACE(algorithmName(algorithm));
    auto cluster = sim::SimCluster::create(n, noPeerAccess(n), hostStagedConfig(algorithm));
    ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
    std::vector<std::vector<std::int32_t>> data;
    for (int r = 0; r < n; ++r) data.push_back(inputOf(r, count));
    for (int r = 0; r < n; ++r) {
      ASSERT_TRUE((*cluster)
                      ->comm(r)
                      .allreduce(data[r].data(), data[r].data(), count, DataType::kInt32, ReduceOp::kSum)
                      .isOk());
    }
    ASSERT_TRUE((*cluster)->runUntilIdle().isOk());
    for (int r = 0; r < n; ++r) {
      ASSERT_TRUE((*cluster)->comm(r).asyncError().isOk()) << (*cluster)->comm(r).asyncError().toString();
      for (std::size_t i = 0; i < count; i += 997) {
        ASSERT_EQ(data[r][i], n * static_cast<std::int32_t>(i) + n * (n - 1) / 2) << "rank " << r << " element " << i;
      }
    }
    EXPECT_GT(stagedBytes(**cluster), 0u);
    for (int r = 0; r < n; ++r) EXPECT_EQ((*cluster)->comm(r).pinnedStats().bytes_in_use, 0u) << "rank " << r;
    // The simulator priced the host-staged steps as the selector's model did.
    auto report = (*cluster)->comm(0).explainSelection(count, DataType::kInt32);
    ASSERT_TRUE(report.isOk());
    EXPECT_NEAR((*cluster)->world().stats().virtual_time_us, report->candidates.front().predicted_us, 1e-6);
  }
}

TEST(HostStaged, EveryCollectivePlanRunsThroughHostMemoryWithoutPeerAccess) {
  constexpr int n = 4;
  constexpr std::size_t count = 3000;
  for (Algorithm algorithm : {Algorithm::kOneShot, Algorithm::kRing}) {
    SCOPED_TRACE(algorithmName(algorithm));
    auto cluster = sim::SimCluster::create(n, noPeerAccess(n), hostStagedConfig(algorithm));
    ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
    std::vector<std::vector<std::int32_t>> whole, block, gathered, broadcast;
    for (int r = 0; r < n; ++r) {
      whole.push_back(inputOf(r, count * n));
      block.emplace_back(count, -1);
      gathered.emplace_back(count * n, -1);
      broadcast.push_back(inputOf(r, count));
    }
    for (int r = 0; r < n; ++r) {
      Communicator& comm = (*cluster)->comm(r);
      ASSERT_TRUE(comm.reduceScatter(whole[r].data(), block[r].data(), count, DataType::kInt32, ReduceOp::kSum).isOk());
      ASSERT_TRUE(comm.allGather(block[r].data(), gathered[r].data(), count, DataType::kInt32).isOk());
      ASSERT_TRUE(comm.broadcast(broadcast[r].data(), broadcast[r].data(), count, DataType::kInt32, 2).isOk());
    }
    ASSERT_TRUE((*cluster)->runUntilIdle().isOk());
    for (int r = 0; r < n; ++r) {
      ASSERT_TRUE((*cluster)->comm(r).asyncError().isOk()) << (*cluster)->comm(r).asyncError().toString();
      for (std::size_t i = 0; i < count * n; i += 331) {
        // Reduce-scatter gave rank b block b of the sum; the all-gather put every block back in place.
        ASSERT_EQ(gathered[r][i], n * static_cast<std::int32_t>(i) + n * (n - 1) / 2) << "rank " << r << " at " << i;
      }
      for (std::size_t i = 0; i < count; i += 331) ASSERT_EQ(broadcast[r][i], 2 + static_cast<std::int32_t>(i));
    }
    EXPECT_GT(stagedBytes(**cluster), 0u);
  }
}

TEST(HostStaged, APinnedLimitBelowAChunkFailsTheOperationWithOutOfMemory) {
  constexpr int n = 3;
  constexpr std::size_t count = 20000;  // 80 KB chunks; the limit holds 4 KiB
  Config config = hostStagedConfig(Algorithm::kOneShot);
  config.memory.pinned_limit_bytes = 4096;
  auto cluster = sim::SimCluster::create(n, noPeerAccess(n), config);
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  std::vector<std::vector<std::int32_t>> data;
  for (int r = 0; r < n; ++r) data.push_back(inputOf(r, count));
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(
        (*cluster)->comm(r).allreduce(data[r].data(), data[r].data(), count, DataType::kInt32, ReduceOp::kSum).isOk());
  }
  (void)(*cluster)->runUntilIdle();
  for (int r = 0; r < n; ++r) {
    const Status error = (*cluster)->comm(r).asyncError();
    EXPECT_EQ(error.code(), ErrorCode::kOutOfMemory) << error.toString();
    EXPECT_TRUE(contains(error.message(), "over the host-staged link")) << error.message();
    EXPECT_TRUE(contains(error.message(), "PEERREDUCE_PINNED_LIMIT_BYTES")) << error.message();
    EXPECT_GT((*cluster)->comm(r).pinnedStats().failures, 0u);
    EXPECT_EQ((*cluster)->comm(r).pinnedStats().bytes_in_use, 0u) << "a failed step keeps no block";
  }
}

// A transport that hides its LinkAdoption: as a GPU transport without host staging is.
class WithoutLinkAdoption final : public TransportWrapper {
 public:
  using TransportWrapper::TransportWrapper;
  TransportCapabilities capabilities() override {
    TransportCapabilities c = TransportWrapper::capabilities();
    c.link_adoption = nullptr;
    return c;
  }
};

TEST(HostStaged, ATransportThatCannotStageIsRefusedOnlyWhereTheMaskStagesOneOfItsLinks) {
  const auto decorate = [](const std::shared_ptr<sim::SimWorld>&, int, std::shared_ptr<Transport> inner) {
    return std::shared_ptr<Transport>(std::make_shared<WithoutLinkAdoption>(std::move(inner)));
  };
  auto refused = sim::SimCluster::create(3, {}, hostStagedConfig(Algorithm::kAuto, "host:0-1"), decorate);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), ErrorCode::kUnsupported) << refused.status().toString();
  EXPECT_TRUE(contains(refused.status().message(), "cannot stage the link 0->1 through host memory"))
      << refused.status().message();
  // Links the transport itself reports as host-staged are its own business, and plain masks need nothing.
  sim::SimOptions pcie;
  pcie.topology = *pcieSwitchTopology(4, 2);
  EXPECT_TRUE(sim::SimCluster::create(4, pcie, hostStagedConfig(Algorithm::kAuto, "0-1"), decorate).isOk());
}

TEST(HostStaged, AdoptingLinksRefusesAnotherWorldSizeANullPoolAndQueuedOperations) {
  ConnectedWorld c = makeConnectedWorld(2);
  LinkAdoption* adoption = c.transport(0).capabilities().link_adoption;
  ASSERT_NE(adoption, nullptr);
  auto pool = std::make_shared<PinnedHostPool>(std::move(PinnedHostPool::create({})).value());
  const Status wrong_size = adoption->adoptLinks(Topology::fullMesh(3), pool);
  EXPECT_EQ(wrong_size.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(wrong_size.message(), "agreed links for 3 ranks in a world of 2")) << wrong_size.message();
  const Status no_pool = adoption->adoptLinks(Topology::fullMesh(2), nullptr);
  EXPECT_EQ(no_pool.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(no_pool.message(), "no pinned pool")) << no_pool.message();

  auto plan = buildPlan(PlanRequest(Algorithm::kOneShot, 2));
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  const auto shared = std::make_shared<const Plan>(std::move(plan).value());
  ASSERT_TRUE(c.transport(0).submit(c.request(0, shared, 64), nullptr).isOk());
  const Status queued = adoption->adoptLinks(Topology::fullMesh(2), pool);
  EXPECT_EQ(queued.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(queued.message(), "while operations are queued")) << queued.message();
  ASSERT_TRUE(c.transport(1).submit(c.request(1, shared, 64), nullptr).isOk());
  EXPECT_TRUE(c.world->runUntilIdle().isOk());
}

// All host-staged traffic of a device shares its path to host memory: reading two peers' chunks over
// host-staged links in one phase costs both chunks' bytes over one link's rate.
TEST(HostStaged, HostStagedReadsOfOnePhaseShareTheDevicesPathToHostMemory) {
  Topology topology = Topology::fullMesh(3);
  const LinkInfo host = defaultHostStagedLink();  // 8 us, 20 GB/s
  topology.setBidirectional(0, 1, host);
  topology.setBidirectional(0, 2, host);
  const TimingModel model(topology);
  PhaseTimer timer(model, 0);
  RankProgram program;
  program.sources = {BufferRef{1, BufferKind::kScratch, 0}, BufferRef{2, BufferKind::kScratch, 0}};
  Step reduce;
  reduce.kind = StepKind::kReduce;
  reduce.dst = BufferRef{0, BufferKind::kOutput, 0};
  reduce.src_begin = 0;
  reduce.src_count = 2;
  constexpr std::size_t count = 100000;  // 400 KB per source
  const double end = timer.addDataStep(program, reduce, ChunkLayout::make(count, 1, 4), 4, 0.0);
  const double bytes_per_us = host.bandwidth_gbps * 1e3;
  const double shared = host.latency_us + 2.0 * count * 4 / bytes_per_us;  // 48 us, not 28 us per link
  EXPECT_NEAR(end, topology.device().step_overhead_us + shared, 1e-9);
}

}  // namespace
}  // namespace peerreduce::testing
