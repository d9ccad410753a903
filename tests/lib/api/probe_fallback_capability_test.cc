// The communicator's side of failed access probes (ProbeFallback, peerreduce/transport_capabilities.h), on
// the simulator behind a decorator that fails the probes of chosen pairs while they are direct and, like
// the GPU transport, re-places its region in a block of the communicator's pinned pool when it falls
// back: the ranks agree on the failed pairs, fall back, exchange again and agree on host-staged links for
// them; a probe that fails again, a rank that cannot fall back and a pinned pool too small for the
// re-placed region each fail creation on every rank with a typed error.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "memory/pinned_host_pool.h"
#include "peerreduce/communicator.h"
#include "sim_cluster.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

constexpr int kProbeFallbackCapabilityRanks = 4;

struct ProbeScript {
  std::mutex mu;
  std::set<std::pair<int, int>> failing;  // (rank, peer): rank's probe of peer fails while the pair is direct
  bool fail_after_fallback = false;       // ... and over the host-staged path too
  int refuse_fallback = -1;               // this rank's fallBackToHostStaging fails
  std::vector<std::vector<std::string>> events = std::vector<std::vector<std::string>>(kProbeFallbackCapabilityRanks);
};

class ProbingTransport final : public TransportWrapper, private HostStaging, private ProbeFallback {
 public:
  ProbingTransport(std::shared_ptr<Transport> target, int rank, ProbeScript& script)
      : TransportWrapper(std::move(target)), rank_(rank), script_(script) {}
  TransportCapabilities capabilities() override {
    TransportCapabilities inner = TransportWrapper::capabilities();
    inner.host_staging = this;
    inner.probe_fallback = this;
    return inner;
  }
  StatusOr<OpenedRegion> openSymmetric(std::size_t bytes) override {
    note("open");
    // A rank in a pair that fell back places its region in pinned host memory, as the GPU transport does.
    if (replaced_) {
      auto block = pool_->acquire(bytes, PinnedUse::kResident);
      if (!block.isOk()) return block.status().withContext("rank " + std::to_string(rank_) + " host-staged region");
      region_ = std::move(block).value();
    }
    return TransportWrapper::openSymmetric(bytes);
  }
  Status connectPeers(const std::vector<std::vector<std::byte>>& records) override {
    note("connect");
    PR_RETURN_IF_ERROR(TransportWrapper::connectPeers(records));
    failed_.clear();
    std::lock_guard<std::mutex> lock(script_.mu);
    for (const auto& [rank, peer] : script_.failing) {
      const bool staged = staged_.count({std::min(rank, peer), std::max(rank, peer)}) != 0;
      if (rank == rank_ && (!staged || script_.fail_after_fallback)) failed_.push_back(peer);
    }
    if (failed_.empty()) return Status::ok();
    return unavailableError("rank " + std::to_string(rank_) + ": access probe failed");
  }
  Status configureHostStaging(const HostStagingRequest& request) override {
    pool_ = request.pool;
    return Status::ok();
  }
  Status peersConnected() override { return Status::ok(); }
  std::vector<int> failedProbes() const override { return failed_; }
  Status fallBackToHostStaging(const std::vector<std::uint8_t>& pairs) override {
    note("fall back");
    if (rank_ == script_.refuse_fallback) return internalError("rank " + std::to_string(rank_) + " cannot fall back");
    ProbeFallback* inner = TransportWrapper::capabilities().probe_fallback;
    if (inner == nullptr) return internalError("the simulator lost its ProbeFallback");
    PR_RETURN_IF_ERROR(inner->fallBackToHostStaging(pairs));
    for (int a = 0; a < kProbeFallbackCapabilityRanks; ++a) {
      for (int b = a + 1; b < kProbeFallbackCapabilityRanks; ++b) {
        if (pairs[static_cast<std::size_t>(a * kProbeFallbackCapabilityRanks + b)] == 0) continue;
        staged_.insert({a, b});
        replaced_ = replaced_ || a == rank_ || b == rank_;
      }
    }
    region_.reset();
    return Status::ok();
  }

 private:
  void note(const std::string& event) {
    std::lock_guard<std::mutex> lock(script_.mu);
    script_.events[static_cast<std::size_t>(rank_)].push_back(event);
  }
  int rank_;
  ProbeScript& script_;
  std::shared_ptr<PinnedHostPool> pool_;
  std::vector<int> failed_;
  std::set<std::pair<int, int>> staged_;
  bool replaced_ = false;
  PinnedBlock region_;
};

Config probeConfig() {
  Config config;
  config.memory.pool_bytes = std::size_t{2} << 20;
  config.scratch_bytes = std::size_t{256} << 10;
  config.timeout = std::chrono::milliseconds(2000);
  return config;
}

StatusOr<std::unique_ptr<sim::SimCluster>> clusterWith(ProbeScript& script, const Config& config = probeConfig()) {
  return sim::SimCluster::create(
      kProbeFallbackCapabilityRanks, {}, config,
      [&script](const std::shared_ptr<sim::SimWorld>&, int rank, std::shared_ptr<Transport> t) {
        return std::shared_ptr<Transport>(std::make_shared<ProbingTransport>(std::move(t), rank, script));
      });
}

using peerreduce::testing::contains;

TEST(ProbeFallbackCapability, AOneSidedFailedProbeFallsBackOnEveryRankAndTheLinksAgree) {
  ProbeScript script;
  script.failing = {{2, 0}};  // only rank 2 sees it: the agreement tells rank 0
  auto cluster = clusterWith(script);
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  const std::vector<std::string> expected = {"open", "connect", "fall back", "open", "connect"};
  for (int r = 0; r < kProbeFallbackCapabilityRanks; ++r) {
    EXPECT_EQ(script.events[static_cast<std::size_t>(r)], expected) << "rank " << r;
    const Topology links = (*cluster)->comm(r).topology();
    EXPECT_EQ(links.link(0, 2).link_class, LinkClass::kHostStaged) << "rank " << r;
    EXPECT_EQ(links.link(2, 0).link_class, LinkClass::kHostStaged) << "rank " << r;
    EXPECT_NE(links.link(0, 1).link_class, LinkClass::kHostStaged) << "rank " << r;
    EXPECT_NE(links.link(1, 3).link_class, LinkClass::kHostStaged) << "rank " << r;
  }
  // Ranks 0 and 2 re-placed their regions in the pinned pool; 1 and 3 did not.
  EXPECT_EQ((*cluster)->comm(0).pinnedStats().blocks_in_use, 1u);
  EXPECT_EQ((*cluster)->comm(2).pinnedStats().blocks_in_use, 1u);
  EXPECT_EQ((*cluster)->comm(1).pinnedStats().blocks_in_use, 0u);
  std::vector<std::vector<float>> data(kProbeFallbackCapabilityRanks, std::vector<float>(1000));
  for (int r = 0; r < kProbeFallbackCapabilityRanks; ++r) {
    for (std::size_t i = 0; i < data[static_cast<std::size_t>(r)].size(); ++i) {
      data[static_cast<std::size_t>(r)][i] = static_cast<float>(r + 1) * 0.5f + static_cast<float>(i % 7);
    }
  }
  for (int r = 0; r < kProbeFallbackCapabilityRanks; ++r) {
    auto& buffer = data[static_cast<std::size_t>(r)];
    ASSERT_TRUE((*cluster)
                    ->comm(r)
                    .allreduce(buffer.data(), buffer.data(), buffer.size(), DataType::kFloat32, ReduceOp::kSum)
                    .isOk());
  }
  ASSERT_TRUE((*cluster)->world().runUntilIdle().isOk());
  for (int r = 0; r < kProbeFallbackCapabilityRanks; ++r) {
    EXPECT_EQ(data[static_cast<std::size_t>(r)][3], 5.0f + 4.0f * 3.0f) << "rank " << r;
  }
}

TEST(ProbeFallbackCapability, WithoutFailedProbesThereIsOneExchange) {
  ProbeScript script;
  auto cluster = clusterWith(script);
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  for (int r = 0; r < kProbeFallbackCapabilityRanks; ++r) {
    EXPECT_EQ(script.events[static_cast<std::size_t>(r)], (std::vector<std::string>{"open", "connect"}));
    EXPECT_NE((*cluster)->comm(r).topology().link(0, 1).link_class, LinkClass::kHostStaged);
  }
}

TEST(ProbeFallbackCapability, AProbeThatFailsAgainFailsCreationNamingThePairAndBothExchanges) {
  ProbeScript script;
  script.failing = {{1, 3}};
  script.fail_after_fallback = true;
  auto cluster = clusterWith(script);
  ASSERT_FALSE(cluster.isOk());
  EXPECT_EQ(cluster.status().code(), ErrorCode::kUnavailable) << cluster.status().toString();
  const std::string text = cluster.status().message();
  EXPECT_TRUE(contains(text, "pairs 1-3")) << text;
  EXPECT_TRUE(contains(text, "exchange 2")) << text;
  EXPECT_TRUE(contains(text, "exchange 1 had failed on pairs 1-3")) << text;
  for (int r = 0; r < kProbeFallbackCapabilityRanks; ++r) {
    EXPECT_EQ(script.events[static_cast<std::size_t>(r)].size(), 5u) << "rank " << r << ": exchanges are bounded";
  }
}

TEST(ProbeFallbackCapability, ARankThatCannotFallBackFailsCreationOnEveryRank) {
  ProbeScript script;
  script.failing = {{0, 1}};
  script.refuse_fallback = 3;
  auto cluster = clusterWith(script);
  ASSERT_FALSE(cluster.isOk());
  EXPECT_TRUE(contains(cluster.status().message(), "rank 3")) << cluster.status().toString();
  for (int r = 0; r < kProbeFallbackCapabilityRanks; ++r) {
    // Nobody opened again: the refusal was agreed before the second exchange.
    EXPECT_EQ(script.events[static_cast<std::size_t>(r)].size(), 3u) << "rank " << r;
  }
}

TEST(ProbeFallbackCapability, APinnedPoolTooSmallForTheReplacedRegionFailsCreationWithItsError) {
  ProbeScript script;
  script.failing = {{0, 1}};
  Config config = probeConfig();
  config.memory.pinned_limit_bytes = kMinPinnedLimitBytes;  // below the 2 MiB region
  auto cluster = clusterWith(script, config);
  ASSERT_FALSE(cluster.isOk());
  const std::string text = cluster.status().toString();
  // Rank 0 (the first rank's error comes back) cannot take its region from the pool: the pool's own error.
  EXPECT_EQ(cluster.status().code(), ErrorCode::kOutOfMemory) << text;
  EXPECT_TRUE(contains(text, "rank 0 host-staged region")) << text;
  EXPECT_TRUE(contains(text, "PEERREDUCE_PINNED_LIMIT_BYTES")) << text;
}

}  // namespace
}  // namespace peerreduce
