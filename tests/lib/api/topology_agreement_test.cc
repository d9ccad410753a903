// The topology rows ranks exchange at creation carry the whole device model, the launch overhead
// included, and a row whose numbers are out of range is refused as corrupt (api/topology_agreement.h);
// a link mask that cuts a connected world apart is the configuration's fault, not the machine's.
#include "api/topology_agreement.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "sim/sim_cluster.h"
#include "topology/generators.h"

namespace peerreduce {
namespace {

// Every rank sent what this rank sent: enough to check what one row turns into. The tests use one rank,
// where that is exactly the exchange (with more, each echoed row would lack its own rank's link).
class EchoBootstrap final : public Bootstrap {
 public:
  explicit EchoBootstrap(int size) : size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  Status allGather(std::span<const std::byte> mine, std::span<std::byte> all, std::chrono::milliseconds) override {
    for (int r = 0; r < size_; ++r)
      std::memcpy(all.data() + static_cast<std::size_t>(r) * mine.size(), mine.data(), mine.size());
    return Status::ok();
  }

 private:
  int size_;
};

StatusOr<AgreedTopology> agreeWith(double launch_overhead_us) {
  DeviceModel device;
  device.step_overhead_us = 1.25;
  device.launch_overhead_us = launch_overhead_us;
  EchoBootstrap bootstrap(1);
  return agreeOnTopology(0, 1, Topology::fullMesh(1, Topology::defaultNvLink(), device), "sm_90", bootstrap, Config{});
}

TEST(TopologyAgreement, TheDeviceModelTravelsWhole) {
  auto agreed = agreeWith(2.75);
  ASSERT_TRUE(agreed.isOk()) << agreed.status().toString();
  EXPECT_EQ(agreed->topology.device().launch_overhead_us, 2.75);
  EXPECT_EQ(agreed->topology.device().step_overhead_us, 1.25);
  EXPECT_EQ(agreed->architecture, "sm_90");
  auto none = agreeWith(0.0);
  ASSERT_TRUE(none.isOk()) << none.status().toString();
  EXPECT_EQ(none->topology.device().launch_overhead_us, 0.0);
}

TEST(TopologyAgreement, CopyEngineFiguresTravelAndOutOfRangeIsCorrupt) {
  DeviceModel device;
  device.copy_engine_launch_us = 1.75;
  device.copy_engine_gbps = 391.0;
  EchoBootstrap bootstrap(1);
  auto agreed =
      agreeOnTopology(0, 1, Topology::fullMesh(1, Topology::defaultNvLink(), device), "sm_90", bootstrap, Config{});
  ASSERT_TRUE(agreed.isOk()) << agreed.status().toString();
  EXPECT_EQ(agreed->topology.device().copy_engine_launch_us, 1.75);
  EXPECT_EQ(agreed->topology.device().copy_engine_gbps, 391.0);
  for (double bad : {0.0, -3.0, std::numeric_limits<double>::quiet_NaN()}) {
    DeviceModel broken = device;
    broken.copy_engine_gbps = bad;
    EchoBootstrap again(1);
    auto refused =
        agreeOnTopology(0, 1, Topology::fullMesh(1, Topology::defaultNvLink(), broken), "sm_90", again, Config{});
    ASSERT_FALSE(refused.isOk()) << bad;
    EXPECT_EQ(refused.status().code(), ErrorCode::kCorrupt) << bad;
  }
}

TEST(TopologyAgreement, LaunchOverheadOutOfRangeIsCorrupt) {
  for (double bad : {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 2e9}) {
    auto agreed = agreeWith(bad);
    ASSERT_FALSE(agreed.isOk()) << bad;
    EXPECT_EQ(agreed.status().code(), ErrorCode::kCorrupt) << bad;
    EXPECT_NE(agreed.status().message().find("device model out of range"), std::string::npos)
        << agreed.status().message();
  }
}

// A world left disconnected by a mask was refused as kUnavailable (exit 1 from peerreduce-sim) although the
// machine was fine and the setting was wrong: now kInvalidArgument naming the mask and the ranks cut off.
TEST(TopologyAgreement, MaskThatDisconnectsAConnectedWorldIsAnInvalidArgument) {
  Config config;
  config.link_mask = "0-1,0-2,0-3";
  auto cluster = sim::SimCluster::create(4, sim::SimOptions{}, config);
  ASSERT_FALSE(cluster.isOk());
  EXPECT_EQ(cluster.status().code(), ErrorCode::kInvalidArgument) << cluster.status().toString();
  const std::string& message = cluster.status().message();
  EXPECT_NE(message.find("link mask '0-1,0-2,0-3' (PEERREDUCE_LINK_MASK) disconnects a connected world"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("ranks 1,2,3 cannot be reached from rank 0"), std::string::npos) << message;
}

// host:all on a machine without peer access: creation succeeds, and every rank's agreed topology has
// every pair host-staged with the default figures (the simulator's architecture has no profile).
TEST(TopologyAgreement, HostAllConnectsAMachineWithoutPeerAccessOnEveryRank) {
  sim::SimOptions options;
  options.topology = Topology(3);
  Config config;
  config.link_mask = "host:all";
  auto cluster = sim::SimCluster::create(3, options, config);
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  for (int r = 0; r < 3; ++r) {
    const Topology& agreed = (*cluster)->comm(r).topology();
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) {
        if (a == b) continue;
        EXPECT_EQ(agreed.link(a, b), defaultHostStagedLink()) << "rank " << r << ": " << a << "->" << b;
      }
    }
  }
  config.link_mask = "host:0-3";
  auto outside = sim::SimCluster::create(3, options, config);
  ASSERT_FALSE(outside.isOk());
  EXPECT_EQ(outside.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(outside.status().message().find("PEERREDUCE_LINK_MASK"), std::string::npos) << outside.status().message();
  EXPECT_NE(outside.status().message().find("entry 'host:0-3'"), std::string::npos) << outside.status().message();
}

// A machine that is disconnected without any mask stays kUnavailable: nothing the user set is wrong.
TEST(TopologyAgreement, DisconnectedMachineIsStillUnavailable) {
  sim::SimOptions options;
  options.topology = Topology(2);
  auto cluster = sim::SimCluster::create(2, options, Config{});
  ASSERT_FALSE(cluster.isOk());
  EXPECT_EQ(cluster.status().code(), ErrorCode::kUnavailable) << cluster.status().toString();
}

}  // namespace
}  // namespace peerreduce
