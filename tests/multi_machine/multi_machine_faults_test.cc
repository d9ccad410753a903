// Faults between machines on the simulator: a network link down or a machine lost ends every rank's
// allreduce, reduce-scatter or all-gather with a typed error, and the error names the machines.
#include <gtest/gtest.h>

#include <cstdio>

#include "api/machine_layout.h"
#include "multi_machine_collective_case.h"
#include "rank_threads.h"

namespace peerreduce::testing {
namespace {

MachineLayout machineLayoutOfForTest(const std::vector<std::string>& ids) {
  auto layout = machineLayoutOf(ids, 0);
  EXPECT_TRUE(layout.isOk());
  return *layout;
}

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

// Local rank 1's network link between machine 0 and machine 2 goes down, both directions.
void cutLocalRankOnesLinkBetweenMachines0And2(sim::MultiMachineSimCluster& cluster) {
  cluster.world().networkWorld(1).faults().setLinkDown(0, 2, true);
  cluster.world().networkWorld(1).faults().setLinkDown(2, 0, true);
}

// After that cut: every rank failed naming a machine; the ranks that saw it name the link; their machine's
// other rank learns it from the machine's agreement, naming the local rank that failed.
void expectEveryRankFailedAndTheLinkNamed(const std::vector<Status>& statuses) {
  for (std::size_t r = 0; r < statuses.size(); ++r) {
    EXPECT_FALSE(statuses[r].isOk()) << "rank " << r;
    EXPECT_NE(statuses[r].message().find("machine '"), std::string::npos)
        << "rank " << r << ": " << statuses[r].toString();
  }
  const Status& seen = statuses[1];  // local rank 1 of machine 0
  EXPECT_EQ(seen.code(), ErrorCode::kLinkDown) << seen.toString();
  EXPECT_NE(seen.message().find("the network link between machine 'machine-0' and machine 'machine-2' down"),
            std::string::npos)
      << seen.toString();
  EXPECT_EQ(statuses[0].code(), ErrorCode::kUnavailable) << statuses[0].toString();
  EXPECT_NE(statuses[0].message().find("local rank 1 failed"), std::string::npos) << statuses[0].toString();
}

TEST(MultiMachineFaults, ANetworkLinkDownEndsEveryRanksOperationNamingTheMachines) {
  auto cluster = makeCluster();
  ASSERT_NE(cluster, nullptr);
  cutLocalRankOnesLinkBetweenMachines0And2(*cluster);
  const std::vector<Status> statuses = runOnce(*cluster);
  expectEveryRankFailedAndTheLinkNamed(statuses);
  std::printf("local rank 1 of machine 0: %s\nlocal rank 0 of machine 0: %s\n", statuses[1].toString().c_str(),
              statuses[0].toString().c_str());
}

// A link down between machines 1 and 2 leaves machine 0's reads in that network world intact, so its
// step completes there; it must fail all the same, naming the machines where the step failed (found by
// the multi-machine campaign, seed 16).
TEST(MultiMachineFaults, AMachineWhoseStepCompletedFailsWithTheOthers) {
  auto cluster = makeCluster();
  ASSERT_NE(cluster, nullptr);
  cluster->world().networkWorld(0).faults().setLinkDown(1, 2, true);
  cluster->world().networkWorld(0).faults().setLinkDown(2, 1, true);
  const std::vector<Status> statuses = runOnce(*cluster);
  for (int r = 0; r < cluster->size(); ++r) EXPECT_FALSE(statuses[static_cast<std::size_t>(r)].isOk()) << "rank " << r;
  const Status& intact = statuses[0];  // local rank 0 of machine 0
  EXPECT_EQ(intact.code(), ErrorCode::kUnavailable) << intact.toString();
  EXPECT_NE(intact.message().find("the step failed on machine 'machine-1'"), std::string::npos) << intact.toString();
  EXPECT_NE(intact.message().find("machine 'machine-2'"), std::string::npos) << intact.toString();
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

// Every rank's reduce-scatter or all-gather of kCase.count per rank (out of place), synchronized.
std::vector<Status> runCollectiveOnce(sim::MultiMachineSimCluster& cluster, Collective collective,
                                      MachineStrategy strategy) {
  const auto n = static_cast<std::size_t>(cluster.size());
  std::vector<std::vector<float>> large(n, std::vector<float>(n * kCase.count, 1.0f));
  std::vector<std::vector<float>> small(n, std::vector<float>(kCase.count, 1.0f));
  return cluster.run([&](MultiMachineCommunicator& comm, int r) {
    const auto i = static_cast<std::size_t>(r);
    if (collective == Collective::kReduceScatter) {
      return comm.reduceScatter(large[i].data(), small[i].data(), kCase.count, DataType::kFloat32, ReduceOp::kSum,
                                nullptr, strategy);
    }
    return comm.allGather(small[i].data(), large[i].data(), kCase.count, DataType::kFloat32, nullptr, strategy);
  });
}

TEST(MultiMachineFaults, AMachineLostMidReduceScatterOrAllGatherEndsEveryRanksOperationNamingIt) {
  for (Collective collective : {Collective::kReduceScatter, Collective::kAllGather}) {
    for (MachineStrategy strategy : {MachineStrategy::kHierarchical, MachineStrategy::kFlat}) {
      auto cluster = makeCluster();
      ASSERT_NE(cluster, nullptr);
      // Machine 1's ranks halt in every network world: the step between machines fails, whether it is the
      // operation's second (hierarchical reduce-scatter, flat all-gather) or its first.
      for (int i = 0; i < kCase.ranks_per_machine; ++i) cluster->world().networkWorld(i).faults().haltRank(1, 0);
      const std::vector<Status> statuses = runCollectiveOnce(*cluster, collective, strategy);
      for (int r = 0; r < cluster->size(); ++r) {
        const Status& s = statuses[static_cast<std::size_t>(r)];
        const std::string what = std::string(collectiveName(collective)) + " " + machineStrategyName(strategy) +
                                 ", rank " + std::to_string(r) + ": " + s.toString();
        EXPECT_FALSE(s.isOk()) << what;
        if (cluster->world().machineOf(r) != 1) {
          EXPECT_NE(s.message().find("machine 'machine-1' lost"), std::string::npos) << what;
        }
      }
    }
  }
}

TEST(MultiMachineFaults, ANetworkLinkDownEndsEveryRanksReduceScatterNamingTheLink) {
  auto cluster = makeCluster();
  ASSERT_NE(cluster, nullptr);
  cutLocalRankOnesLinkBetweenMachines0And2(*cluster);
  // Local rank 0's network world completes: its machine's agreement after the network step fails it too.
  expectEveryRankFailedAndTheLinkNamed(
      runCollectiveOnce(*cluster, Collective::kReduceScatter, MachineStrategy::kHierarchical));
}

// After a machine is lost the world agrees on it over the world's bootstrap, every rank decides the
// same, the plan keeps the other machines whole, and they go on in a world of their own.
TEST(MultiMachineFaults, TheWorldAgreesOnALostMachineAndTheOthersGoOn) {
  auto cluster = makeCluster();
  ASSERT_NE(cluster, nullptr);
  for (int i = 0; i < kCase.ranks_per_machine; ++i) cluster->world().networkWorld(i).faults().haltRank(1, 0);
  for (const Status& s : runOnce(*cluster)) EXPECT_FALSE(s.isOk());
  const int n = cluster->size();
  std::vector<StatusOr<FailureDecision>> decisions(static_cast<std::size_t>(n), internalError("not run"));
  std::vector<FailureDecision> decided(static_cast<std::size_t>(n));
  std::vector<Status> errors(static_cast<std::size_t>(n));
  sim::runOnRankThreads(n, [&](int r) {
    MultiMachineCommunicator& comm = cluster->comm(r);
    auto d = agreeOnFailures(*cluster->world().worldBootstrap(r), agreementTopology(comm.layout()),
                             comm.failureReport(), std::chrono::milliseconds(10000));
    if (d.isOk()) {
      decided[static_cast<std::size_t>(r)] = *d;
    } else {
      errors[static_cast<std::size_t>(r)] = d.status();
    }
  });
  for (int r = 0; r < n; ++r) {
    ASSERT_TRUE(errors[static_cast<std::size_t>(r)].isOk()) << errors[static_cast<std::size_t>(r)].toString();
    const FailureDecision& d = decided[static_cast<std::size_t>(r)];
    EXPECT_EQ(d.failed, (std::vector<int>{2, 3})) << "rank " << r;  // machine 1: ranks 2 and 3
  }
  auto shrink = planMachineShrink(cluster->comm(0).layout(), decided[0]);
  ASSERT_TRUE(shrink.isOk()) << shrink.status().toString();
  EXPECT_EQ(shrink->machines, (std::vector<int>{0, 2}));
  EXPECT_EQ(shrink->survivors, (std::vector<int>{0, 1, 4, 5}));
  ASSERT_EQ(shrink->dropped.size(), 1u);
  EXPECT_NE(shrink->dropped[0].find("machine 'machine-1'"), std::string::npos) << shrink->dropped[0];
  // The survivors' world: two machines of two ranks.
  MultiMachineCase rest = kCase;
  rest.machines = static_cast<int>(shrink->machines.size());
  auto survivors = sim::MultiMachineSimCluster::create(optionsOf(rest), multiMachineTestConfig());
  ASSERT_TRUE(survivors.isOk()) << survivors.status().toString();
  EXPECT_EQ(runMultiMachineCase(**survivors, rest).problem, "");
}

TEST(MultiMachineFaults, ShrinkDropsTheHigherMachineOfADeadNetworkLinkAndRefusesWhenNoneIsLeft) {
  auto layout = machineLayoutOfForTest({"a", "a", "b", "b", "c", "c"});
  FailureDecision d;
  d.dead_links = {{1, 5}};  // local rank 1 of machine a and of machine c
  auto shrink = planMachineShrink(layout, d);
  ASSERT_TRUE(shrink.isOk());
  EXPECT_EQ(shrink->machines, (std::vector<int>{0, 1}));
  EXPECT_NE(shrink->dropped[0].find("machine 'c': its network link to machine 'a' is down"), std::string::npos)
      << shrink->dropped[0];
  d.dead_links.clear();
  d.failed = {0, 3, 4};
  auto none = planMachineShrink(layout, d);
  EXPECT_EQ(none.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(none.status().message().find("machine 'b': rank 3 failed"), std::string::npos) << none.status().message();
  d.failed.clear();
  d.dead_links = {{0, 9}};
  EXPECT_EQ(planMachineShrink(layout, d).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace peerreduce::testing
