// The C API of communicators that span machines, on simulated machines: every collective through it
// (int32, exact), the layout, and every refusal: NULL and dead handles, ranks and worlds out of range, an
// unknown strategy, integer avg.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "peerreduce/peerreduce_sim.h"

namespace {

constexpr int kMultiMachineCApiMachines = 2;
constexpr int kMultiMachineCApiRanksPerMachine = 2;
constexpr int kMultiMachineCApiRanks = kMultiMachineCApiMachines * kMultiMachineCApiRanksPerMachine;

std::string lastCError() { return prGetLastError(); }

// Runs body(rank) on a thread per rank (every call across machines needs one) and returns each result.
template <typename Body>
std::vector<prResult_t> onEveryRank(Body body) {
  std::vector<prResult_t> results(kMultiMachineCApiRanks, prSuccess);
  std::vector<std::thread> threads;
  for (int r = 0; r < kMultiMachineCApiRanks; ++r)
    threads.emplace_back([&, r] { results[static_cast<std::size_t>(r)] = body(r); });
  for (std::thread& t : threads) t.join();
  return results;
}

class MultiMachineCApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(prMultiSimWorldCreate(kMultiMachineCApiMachines, kMultiMachineCApiRanksPerMachine, 3, &world_), prSuccess)
        << lastCError();
    ASSERT_EQ(prMultiCommInitSimAll(world_, nullptr, comms_), prSuccess) << lastCError();
  }
  void TearDown() override {
    for (prMultiComm_t comm : comms_) {
      if (comm != nullptr) {
        EXPECT_EQ(prMultiCommDestroy(comm), prSuccess) << lastCError();
      }
    }
    if (world_ != nullptr) {
      EXPECT_EQ(prMultiSimWorldDestroy(world_), prSuccess) << lastCError();
    }
  }
  prMultiSimWorld_t world_ = nullptr;
  prMultiComm_t comms_[kMultiMachineCApiRanks] = {};
};

TEST_F(MultiMachineCApi, EveryCollectiveIsExactAndTheLayoutIsTheWorlds) {
  constexpr std::size_t kCount = 37;
  std::vector<std::vector<std::int32_t>> large(kMultiMachineCApiRanks,
                                               std::vector<std::int32_t>(kMultiMachineCApiRanks * kCount));
  std::vector<std::vector<std::int32_t>> small(kMultiMachineCApiRanks, std::vector<std::int32_t>(kCount));
  for (int r = 0; r < kMultiMachineCApiRanks; ++r) {
    for (std::size_t i = 0; i < kMultiMachineCApiRanks * kCount; ++i)
      large[r][i] = r * 1000 + static_cast<std::int32_t>(i);
  }
  // Reduce-scatter (hierarchical), then all-gather (flat) of each rank's block back, then an allreduce
  // (auto) and a broadcast from rank 3, each synchronized.
  const auto results = onEveryRank([&](int r) {
    prResult_t s = prMultiReduceScatter(large[r].data(), small[r].data(), kCount, prInt32, prSum,
                                        prStrategyHierarchical, comms_[r], nullptr);
    if (s == prSuccess) s = prMultiCommSynchronize(comms_[r], nullptr);
    if (s == prSuccess) {
      s = prMultiAllGather(small[r].data(), large[r].data(), kCount, prInt32, prStrategyFlat, comms_[r], nullptr);
    }
    if (s == prSuccess) s = prMultiCommSynchronize(comms_[r], nullptr);
    return s;
  });
  for (prResult_t s : results) ASSERT_EQ(s, prSuccess) << lastCError();
  for (int r = 0; r < kMultiMachineCApiRanks; ++r) {
    for (std::size_t i = 0; i < kMultiMachineCApiRanks * kCount; ++i) {
      // Every rank's reduce-scatter block of element i, gathered: the sum over ranks q of q x 1000 + i.
      ASSERT_EQ(large[r][i], (0 + 1 + 2 + 3) * 1000 + kMultiMachineCApiRanks * static_cast<std::int32_t>(i))
          << r << " " << i;
    }
  }
  std::vector<std::vector<std::int32_t>> value(kMultiMachineCApiRanks, std::vector<std::int32_t>(kCount));
  const auto more = onEveryRank([&](int r) {
    for (std::size_t i = 0; i < kCount; ++i) value[r][i] = r + 1;
    prResult_t s =
        prMultiAllReduce(value[r].data(), value[r].data(), kCount, prInt32, prSum, prStrategyAuto, comms_[r], nullptr);
    if (s == prSuccess) s = prMultiCommSynchronize(comms_[r], nullptr);
    if (s == prSuccess) s = prMultiBroadcast(small[r].data(), small[r].data(), kCount, prInt32, 3, comms_[r], nullptr);
    if (s == prSuccess) s = prMultiCommSynchronize(comms_[r], nullptr);
    return s;
  });
  for (prResult_t s : more) ASSERT_EQ(s, prSuccess) << lastCError();
  for (int r = 0; r < kMultiMachineCApiRanks; ++r) {
    EXPECT_EQ(value[r][5], 1 + 2 + 3 + 4);
    EXPECT_EQ(small[r], small[3]);  // rank 3's block of the reduce-scatter
  }
  prMachineLayout_t layout{};
  ASSERT_EQ(prMultiCommLayout(comms_[3], &layout), prSuccess) << lastCError();
  EXPECT_EQ(layout.rank, 3);
  EXPECT_EQ(layout.size, kMultiMachineCApiRanks);
  EXPECT_EQ(layout.machines, kMultiMachineCApiMachines);
  EXPECT_EQ(layout.ranks_per_machine, kMultiMachineCApiRanksPerMachine);
  EXPECT_EQ(layout.machine, 1);
  EXPECT_EQ(layout.local_rank, 1);
}

TEST_F(MultiMachineCApi, BadArgumentsAreRefusedNamingThem) {
  std::vector<std::int32_t> data(kMultiMachineCApiRanks * 4);
  EXPECT_EQ(prMultiReduceScatter(data.data(), data.data(), 4, prInt32, prSum, static_cast<prMachineStrategy_t>(9),
                                 comms_[0], nullptr),
            prInvalidArgument);
  EXPECT_NE(lastCError().find("unknown strategy value 9"), std::string::npos) << lastCError();
  EXPECT_EQ(prMultiAllReduce(data.data(), data.data(), 4, prInt32, prAvg, prStrategyAuto, comms_[0], nullptr),
            prUnsupported);
  EXPECT_NE(lastCError().find("avg of int32"), std::string::npos) << lastCError();
  EXPECT_EQ(prMultiReduceScatter(data.data(), data.data(), 4, prInt32, prAvg, prStrategyFlat, comms_[0], nullptr),
            prUnsupported);
  EXPECT_EQ(prMultiAllGather(nullptr, data.data(), 4, prInt32, prStrategyAuto, comms_[0], nullptr), prInvalidArgument);
  EXPECT_NE(lastCError().find("send buffer is null"), std::string::npos) << lastCError();
  EXPECT_EQ(prMultiBroadcast(data.data(), data.data(), 4, prInt32, kMultiMachineCApiRanks, comms_[0], nullptr),
            prInvalidArgument);
  EXPECT_EQ(prMultiCommLayout(comms_[0], nullptr), prInvalidArgument);
  EXPECT_NE(lastCError().find("layout is NULL"), std::string::npos) << lastCError();
  EXPECT_EQ(prMultiCommSynchronize(nullptr, nullptr), prInvalidArgument);
  EXPECT_NE(lastCError().find("comm is NULL"), std::string::npos) << lastCError();
  // A destroyed handle is refused, not touched.
  prMultiComm_t gone = comms_[0];
  ASSERT_EQ(prMultiCommAbort(gone), prSuccess);
  ASSERT_EQ(prMultiCommDestroy(gone), prSuccess);
  comms_[0] = nullptr;
  EXPECT_EQ(prMultiCommDestroy(gone), prInvalidArgument);
  EXPECT_NE(lastCError().find("not a live handle"), std::string::npos) << lastCError();
  EXPECT_EQ(prMultiAllReduce(data.data(), data.data(), 4, prInt32, prSum, prStrategyAuto, gone, nullptr),
            prInvalidArgument);
}

TEST(MultiMachineCApiCreation, BadWorldsAndRanksAreRefusedAndOutPointersCleared) {
  prMultiSimWorld_t world = reinterpret_cast<prMultiSimWorld_t>(&world);  // not NULL: must be cleared
  EXPECT_EQ(prMultiSimWorldCreate(0, 2, 1, &world), prInvalidArgument);
  EXPECT_EQ(world, nullptr);
  EXPECT_NE(lastCError().find("machines"), std::string::npos) << lastCError();
  EXPECT_EQ(prMultiSimWorldCreate(16, 8, 1, &world), prInvalidArgument);  // 128 ranks: more than one process runs
  EXPECT_EQ(prMultiSimWorldCreate(2, 2, 1, nullptr), prInvalidArgument);
  EXPECT_EQ(prMultiSimWorldDestroy(nullptr), prInvalidArgument);
  ASSERT_EQ(prMultiSimWorldCreate(2, 1, 1, &world), prSuccess) << lastCError();
  prMultiComm_t comm = reinterpret_cast<prMultiComm_t>(&comm);
  EXPECT_EQ(prMultiCommInitSimRank(world, 2, nullptr, &comm), prInvalidArgument);
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(lastCError().find("rank 2 is outside 0..1"), std::string::npos) << lastCError();
  EXPECT_EQ(prMultiCommInitSimRank(world, 0, nullptr, nullptr), prInvalidArgument);
  EXPECT_EQ(prMultiCommInitSimAll(world, nullptr, nullptr), prInvalidArgument);
  EXPECT_EQ(prMultiCommInitSimAll(nullptr, nullptr, &comm), prInvalidArgument);
  prConfig_t config;
  ASSERT_EQ(prConfigInit(&config), prSuccess);
  config.struct_size = 3;  // not a prConfig_t of any version
  prMultiComm_t comms[2] = {comm, comm};
  EXPECT_EQ(prMultiCommInitSimAll(world, &config, comms), prInvalidArgument);
  EXPECT_EQ(comms[0], nullptr);
  EXPECT_EQ(comms[1], nullptr);
  ASSERT_EQ(prMultiSimWorldDestroy(world), prSuccess);
  EXPECT_EQ(prMultiSimWorldDestroy(world), prInvalidArgument);
  EXPECT_NE(lastCError().find("not a live handle"), std::string::npos) << lastCError();
}

}  // namespace
