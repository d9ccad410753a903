// Abort means abort across machines: after prMultiCommAbort every later call on the communicator (each
// collective under each strategy, and synchronize) returns prAborted at once with its buffers untouched,
// as prCommAbort does on one machine. Before, each such call reached the exchanges between its steps and
// returned prTimeout after twice the bootstrap bound (20 s). An allreduce in flight when every rank aborts
// returns promptly too: no rank starts an exchange between steps once aborted.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "peerreduce/peerreduce_sim.h"

namespace {

constexpr int kMultiMachineAbortMachines = 2;
constexpr int kMultiMachineAbortRanksPerMachine = 2;
constexpr int kMultiMachineAbortRanks = kMultiMachineAbortMachines * kMultiMachineAbortRanksPerMachine;
constexpr std::size_t kMultiMachineAbortCount = 24;
// Far below the 20 s such a call used to wait, far above what refusing takes on a loaded machine.
constexpr std::chrono::seconds kPrompt{5};
constexpr std::int32_t kSendFill = 7;
constexpr std::int32_t kRecvFill = -3;

std::string lastError() { return prGetLastError(); }

enum class Call { kAllReduce, kReduceScatter, kAllGather, kBroadcast };

struct Case {
  Call call;
  prMachineStrategy_t strategy;
  const char* name;
};

// One call on `comm`; the buffers hold kMultiMachineAbortRanks x kMultiMachineAbortCount elements (enough for every
// collective's largest).
prResult_t run(const Case& c, prMultiComm_t comm, std::vector<std::int32_t>& send, std::vector<std::int32_t>& recv) {
  switch (c.call) {
    case Call::kAllReduce:
      return prMultiAllReduce(send.data(), recv.data(), kMultiMachineAbortCount, prInt32, prSum, c.strategy, comm,
                              nullptr);
    case Call::kReduceScatter:
      return prMultiReduceScatter(send.data(), recv.data(), kMultiMachineAbortCount, prInt32, prSum, c.strategy, comm,
                                  nullptr);
    case Call::kAllGather:
      return prMultiAllGather(send.data(), recv.data(), kMultiMachineAbortCount, prInt32, c.strategy, comm, nullptr);
    case Call::kBroadcast:
      return prMultiBroadcast(send.data(), recv.data(), kMultiMachineAbortCount, prInt32, 0, comm, nullptr);
  }
  return prInternalError;
}

class MultiMachineAbort : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    ASSERT_EQ(prMultiSimWorldCreate(kMultiMachineAbortMachines, kMultiMachineAbortRanksPerMachine, 5, &world_),
              prSuccess)
        << lastError();
    ASSERT_EQ(prMultiCommInitSimAll(world_, nullptr, comms_), prSuccess) << lastError();
  }
  void TearDown() override {
    for (prMultiComm_t comm : comms_) {
      if (comm != nullptr) {
        EXPECT_EQ(prMultiCommDestroy(comm), prSuccess) << lastError();
      }
    }
    if (world_ != nullptr) {
      EXPECT_EQ(prMultiSimWorldDestroy(world_), prSuccess) << lastError();
    }
  }
  prMultiSimWorld_t world_ = nullptr;
  prMultiComm_t comms_[kMultiMachineAbortRanks] = {};
};

// Every rank aborted, then each calls in turn from one thread: were any call to wait for the others, the
// first would wait out its bound.
TEST_P(MultiMachineAbort, LaterCallReturnsAbortedAtOnceWritingNothing) {
  const Case& c = GetParam();
  for (prMultiComm_t comm : comms_) ASSERT_EQ(prMultiCommAbort(comm), prSuccess) << lastError();
  for (int rank = 0; rank < kMultiMachineAbortRanks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    std::vector<std::int32_t> send(kMultiMachineAbortRanks * kMultiMachineAbortCount, kSendFill);
    std::vector<std::int32_t> recv(kMultiMachineAbortRanks * kMultiMachineAbortCount, kRecvFill);
    const auto started = std::chrono::steady_clock::now();
    EXPECT_EQ(run(c, comms_[rank], send, recv), prAborted);
    const std::string message = lastError();
    EXPECT_LT(std::chrono::steady_clock::now() - started, kPrompt);
    EXPECT_NE(message.find("across machines on rank " + std::to_string(rank)), std::string::npos) << message;
    EXPECT_NE(message.find("aborted; destroy it and create a new one"), std::string::npos) << message;
    EXPECT_EQ(send, std::vector<std::int32_t>(kMultiMachineAbortRanks * kMultiMachineAbortCount, kSendFill));
    EXPECT_EQ(recv, std::vector<std::int32_t>(kMultiMachineAbortRanks * kMultiMachineAbortCount, kRecvFill));
    EXPECT_EQ(prMultiCommSynchronize(comms_[rank], nullptr), prAborted);
  }
}

// Only one rank aborted: its own calls refuse at once, whatever the others do.
TEST_P(MultiMachineAbort, AnAbortedRankRefusesWithoutItsPeers) {
  ASSERT_EQ(prMultiCommAbort(comms_[2]), prSuccess) << lastError();
  std::vector<std::int32_t> send(kMultiMachineAbortRanks * kMultiMachineAbortCount, kSendFill);
  std::vector<std::int32_t> recv(kMultiMachineAbortRanks * kMultiMachineAbortCount, kRecvFill);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(run(GetParam(), comms_[2], send, recv), prAborted) << lastError();
  EXPECT_LT(std::chrono::steady_clock::now() - started, kPrompt);
  EXPECT_EQ(recv, std::vector<std::int32_t>(kMultiMachineAbortRanks * kMultiMachineAbortCount, kRecvFill));
}

// An allreduce in flight: ranks 0-2 call while rank 3 never does, so rank 2's step inside its machine and
// rank 1's between machines wait for it; every rank is then aborted from another thread. The abort ends
// those waits, and no aborted rank goes on to the exchanges between steps (which an abort does not end),
// so every call returns promptly with an error. (A call already inside such an exchange when the abort
// comes waits out the exchange's bound: the bootstraps cannot be aborted.)
TEST(MultiMachineAbortInFlight, AllreduceInFlightReturnsPromptlyOnceEveryRankAborts) {
  for (const prMachineStrategy_t strategy : {prStrategyHierarchical, prStrategyFlat}) {
    SCOPED_TRACE(strategy == prStrategyFlat ? "flat" : "hierarchical");
    prMultiSimWorld_t world = nullptr;
    prMultiComm_t comms[kMultiMachineAbortRanks] = {};
    ASSERT_EQ(prMultiSimWorldCreate(kMultiMachineAbortMachines, kMultiMachineAbortRanksPerMachine, 5, &world),
              prSuccess)
        << lastError();
    ASSERT_EQ(prMultiCommInitSimAll(world, nullptr, comms), prSuccess) << lastError();
    std::vector<prResult_t> results(kMultiMachineAbortRanks - 1, prSuccess);
    std::vector<std::thread> callers;
    const auto started = std::chrono::steady_clock::now();
    for (int rank = 0; rank < kMultiMachineAbortRanks - 1; ++rank) {
      callers.emplace_back([&, rank] {
        std::vector<std::int32_t> data(kMultiMachineAbortCount, kSendFill);
        prResult_t result = prMultiAllReduce(data.data(), data.data(), kMultiMachineAbortCount, prInt32, prSum,
                                             strategy, comms[rank], nullptr);
        if (result == prSuccess) result = prMultiCommSynchronize(comms[rank], nullptr);
        results[static_cast<std::size_t>(rank)] = result;
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (prMultiComm_t comm : comms) EXPECT_EQ(prMultiCommAbort(comm), prSuccess) << lastError();
    for (std::thread& t : callers) t.join();
    EXPECT_LT(std::chrono::steady_clock::now() - started, kPrompt);
    for (int rank = 0; rank < kMultiMachineAbortRanks - 1; ++rank) {
      const prResult_t result = results[static_cast<std::size_t>(rank)];
      EXPECT_NE(result, prSuccess) << "rank " << rank << " finished without rank 3";
      EXPECT_NE(result, prTimeout) << "rank " << rank << " waited out its bound";
    }
    for (prMultiComm_t comm : comms) EXPECT_EQ(prMultiCommDestroy(comm), prSuccess) << lastError();
    EXPECT_EQ(prMultiSimWorldDestroy(world), prSuccess) << lastError();
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryCollectiveAndStrategy, MultiMachineAbort,
    ::testing::Values(Case{Call::kAllReduce, prStrategyAuto, "allreduce_auto"},
                      Case{Call::kAllReduce, prStrategyHierarchical, "allreduce_hierarchical"},
                      Case{Call::kAllReduce, prStrategyFlat, "allreduce_flat"},
                      Case{Call::kReduceScatter, prStrategyAuto, "reduce_scatter_auto"},
                      Case{Call::kReduceScatter, prStrategyHierarchical, "reduce_scatter_hierarchical"},
                      Case{Call::kReduceScatter, prStrategyFlat, "reduce_scatter_flat"},
                      Case{Call::kAllGather, prStrategyAuto, "all_gather_auto"},
                      Case{Call::kAllGather, prStrategyHierarchical, "all_gather_hierarchical"},
                      Case{Call::kAllGather, prStrategyFlat, "all_gather_flat"},
                      Case{Call::kBroadcast, prStrategyAuto, "broadcast"}),
    [](const ::testing::TestParamInfo<Case>& param_info) { return std::string(param_info.param.name); });

}  // namespace
