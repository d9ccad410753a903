// Faults between machines on the simulator: a network link down or a machine lost ends every rank's
// allreduce with a typed error, and the error names the machines.
#include <gtest/gtest.h>

#include "multi_machine_case.h"

namespace peerreduce::testing {
namespace {

constexpr MultiMachineCase kCase{
    .machines = 3, .ranks_per_machine = 2, .count = 4096, .strategy = MachineStrategy::kHierarchical};

std::unique_ptr<sim::MultiMachineSimCluster> makeCluster() {
  sim::MultiMachineSimOptions o = optionsOf(kCase);
  o.wait_timeout_us = 1e4;  // virtual: a lost peer is noticed after 10 ms of simulated waiting
  auto cluster = sim::MultiMachineSimCluster::create(o, multiMachineTestConfig());
  EXPECT_TRUE(cluster.isOk()) << cluster.status().toString();
  return cluster.isOk() ? std::move(*cluster) : nullptr;
}

std::vector<Status> runOnce(sim::MultiMachineSimCluster& cluster) {
  const int n = cluster.size();
  std::vector<std::vector<float>> in(static_cast<std::size_t>(n), std::vector<float>(kCase.count, 1.0f));
  std::vector<std::vector<float>> out(static_cast<std::size_t>(n), std::vector<float>(kCase.count, 0.0f));
  std::vector<const void*> send;
  std::vector<void*> recv;
  for (int r = 0; r < n; ++r) {
    send.push_back(in[static_cast<std::size_t>(r)].data());
    recv.push_back(out[static_cast<std::size_t>(r)].data());
  }
  return cluster.allreduce(send, recv, kCase.count, DataType::kFloat32, ReduceOp::kSum, kCase.strategy);
}

TEST(MultiMachineFaults, ANetworkLinkDownEndsEveryRanksOperationNamingTheMachines) {
  auto cluster = makeCluster();
  ASSERT_NE(cluster, nullptr);
  // Local rank 1's network link between machine 0 and machine 2 goes down, both directions.
  cluster->world().networkWorld(1).faults().setLinkDown(0, 2, true);
  cluster->world().networkWorld(1).faults().setLinkDown(2, 0, true);
  const std::vector<Status> statuses = runOnce(*cluster);
  for (int r = 0; r < cluster->size(); ++r) {
    const Status& s = statuses[static_cast<std::size_t>(r)];
    EXPECT_FALSE(s.isOk()) << "rank " << r;
    EXPECT_NE(s.message().find("machine '"), std::string::npos) << "rank " << r << ": " << s.toString();
  }
  // The ranks that saw it name the link between the two machines.
  const Status& seen = statuses[1];  // local rank 1 of machine 0
  EXPECT_NE(seen.message().find("machine-2"), std::string::npos) << seen.toString();
}

TEST(MultiMachineFaults, AMachineLostEndsEveryRanksOperationNamingIt) {
  auto cluster = makeCluster();
  ASSERT_NE(cluster, nullptr);
  // Machine 1 stops: its ranks in the network worlds halt at once.
  for (int i = 0; i < kCase.ranks_per_machine; ++i) cluster->world().networkWorld(i).faults().haltRank(1, 0);
  const std::vector<Status> statuses = runOnce(*cluster);
  for (int r = 0; r < cluster->size(); ++r) {
    const Status& s = statuses[static_cast<std::size_t>(r)];
    EXPECT_FALSE(s.isOk()) << "rank " << r << " (machine " << cluster->world().machineOf(r) << ")";
    if (cluster->world().machineOf(r) != 1) {
      EXPECT_NE(s.message().find("machine 'machine-1' lost"), std::string::npos)
          << "rank " << r << ": " << s.toString();
    }
  }
}

}  // namespace
}  // namespace peerreduce::testing
