// The communicator's side of host-staged links (HostStaging, peerreduce/transport_capabilities.h), on
// the simulator behind a decorator that has the capability: before a rank opens its region it learns
// the pairs the link mask forces and gets the communicator's pinned pool; once every rank connected it
// is told to remove its names; a refusal at either point fails creation on every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "memory/pinned_host_pool.h"
#include "peerreduce/communicator.h"
#include "sim_cluster.h"

namespace peerreduce {
namespace {

constexpr int kHostStagingCapabilityRanks = 3;

struct StagingLog {
  std::mutex mu;
  std::vector<std::vector<std::string>> events = std::vector<std::vector<std::string>>(kHostStagingCapabilityRanks);
  std::vector<std::vector<std::uint8_t>> forced = std::vector<std::vector<std::uint8_t>>(kHostStagingCapabilityRanks);
  std::vector<PinnedStats> pool_after_acquire = std::vector<PinnedStats>(kHostStagingCapabilityRanks);
  int refuse_configure = -1;  // this rank's configureHostStaging fails
  int refuse_connected = -1;  // this rank's peersConnected fails
};

class StagingTransport final : public TransportWrapper, private HostStaging {
 public:
  StagingTransport(std::shared_ptr<Transport> target, int rank, StagingLog& log)
      : TransportWrapper(std::move(target)), rank_(rank), log_(log) {}
  TransportCapabilities capabilities() override {
    TransportCapabilities inner = TransportWrapper::capabilities();
    inner.host_staging = this;
    return inner;
  }
  StatusOr<OpenedRegion> openSymmetric(std::size_t bytes) override {
    note("open");
    return TransportWrapper::openSymmetric(bytes);
  }
  Status connectPeers(const std::vector<std::vector<std::byte>>& records) override {
    note("connect");
    return TransportWrapper::connectPeers(records);
  }
  Status configureHostStaging(const HostStagingRequest& request) override {
    note("configure");
    {
      std::lock_guard<std::mutex> lock(log_.mu);
      log_.forced[static_cast<std::size_t>(rank_)] = request.forced;
    }
    if (request.pool == nullptr) return internalError("no pool");
    // The pool is the communicator's: a block taken here shows in its statistics.
    auto block = request.pool->acquire(4096);
    if (!block.isOk()) return block.status();
    held_ = std::move(block).value();
    {
      std::lock_guard<std::mutex> lock(log_.mu);
      log_.pool_after_acquire[static_cast<std::size_t>(rank_)] = request.pool->stats();
    }
    if (rank_ == log_.refuse_configure) return unavailableError("rank " + std::to_string(rank_) + " cannot stage");
    return Status::ok();
  }
  Status peersConnected() override {
    note("connected");
    if (rank_ == log_.refuse_connected) return internalError("rank " + std::to_string(rank_) + " cannot unlink");
    return Status::ok();
  }

 private:
  void note(const std::string& event) {
    std::lock_guard<std::mutex> lock(log_.mu);
    log_.events[static_cast<std::size_t>(rank_)].push_back(event);
  }
  int rank_;
  StagingLog& log_;
  PinnedBlock held_;
};

Config maskedConfig(const std::string& mask) {
  Config config;
  config.memory.pool_bytes = std::size_t{8} << 20;
  config.scratch_bytes = std::size_t{2} << 20;
  config.timeout = std::chrono::milliseconds(2000);
  config.link_mask = mask;
  return config;
}

StatusOr<std::unique_ptr<sim::SimCluster>> clusterWith(StagingLog& log, const std::string& mask) {
  return sim::SimCluster::create(
      kHostStagingCapabilityRanks, {}, maskedConfig(mask),
      [&log](const std::shared_ptr<sim::SimWorld>&, int rank, std::shared_ptr<Transport> t) {
        return std::shared_ptr<Transport>(std::make_shared<StagingTransport>(std::move(t), rank, log));
      });
}

TEST(HostStagingCapability, TheTransportLearnsTheForcedPairsAndThePoolBeforeOpeningAndIsToldWhenAllConnected) {
  StagingLog log;
  auto cluster = clusterWith(log, "host:0-1");
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  std::vector<std::uint8_t> expected(kHostStagingCapabilityRanks * kHostStagingCapabilityRanks, 0);
  expected[0 * kHostStagingCapabilityRanks + 1] = expected[1 * kHostStagingCapabilityRanks + 0] = 1;
  for (int r = 0; r < kHostStagingCapabilityRanks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    EXPECT_EQ(log.events[i], (std::vector<std::string>{"configure", "open", "connect", "connected"})) << "rank " << r;
    EXPECT_EQ(log.forced[i], expected) << "rank " << r;
    EXPECT_EQ(log.pool_after_acquire[i].blocks_in_use, 1u) << "rank " << r;
    // The communicator reports the same pool.
    EXPECT_EQ((*cluster)->comm(r).pinnedStats().blocks_in_use, 1u) << "rank " << r;
  }
  EXPECT_EQ((*cluster)->comm(2).topology().link(0, 1).link_class, LinkClass::kHostStaged);
}

TEST(HostStagingCapability, WithoutAMaskNothingIsForced) {
  StagingLog log;
  auto cluster = clusterWith(log, "");
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  for (int r = 0; r < kHostStagingCapabilityRanks; ++r) {
    EXPECT_EQ(log.forced[static_cast<std::size_t>(r)],
              std::vector<std::uint8_t>(kHostStagingCapabilityRanks * kHostStagingCapabilityRanks, 0))
        << "rank " << r;
  }
}

TEST(HostStagingCapability, ARankThatCannotStageOrUnlinkFailsCreationOnEveryRank) {
  {
    StagingLog log;
    log.refuse_configure = 1;
    auto cluster = clusterWith(log, "host:all");
    ASSERT_FALSE(cluster.isOk());
    EXPECT_NE(cluster.status().message().find("rank 1"), std::string::npos) << cluster.status().toString();
    for (int r = 0; r < kHostStagingCapabilityRanks; ++r) {
      // No rank went on to map its peers: the refusal travelled with the records.
      const auto& events = log.events[static_cast<std::size_t>(r)];
      EXPECT_EQ(std::count(events.begin(), events.end(), "connect"), 0) << "rank " << r;
    }
  }
  {
    StagingLog log;
    log.refuse_connected = 2;
    auto cluster = clusterWith(log, "host:all");
    ASSERT_FALSE(cluster.isOk());
    EXPECT_NE(cluster.status().message().find("remove the names of its host-staged memory"), std::string::npos)
        << cluster.status().toString();
  }
}

}  // namespace
}  // namespace peerreduce
