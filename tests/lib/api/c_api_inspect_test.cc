// The C API's inspection, registration and recovery calls on the simulator: what C++ has and C lacked.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "peerreduce/peerreduce_sim.h"
#include "text_contains.h"

namespace {

using peerreduce::testing::contains;

struct InspectWorld {
  prSimWorld_t world = nullptr;
  std::vector<prComm_t> comms;
  explicit InspectWorld(int n, const prConfig_t* config = nullptr) : comms(static_cast<std::size_t>(n), nullptr) {
    EXPECT_EQ(prSimWorldCreate(n, 3, &world), prSuccess) << prGetLastError();
    EXPECT_EQ(prCommInitSimAll(world, config, comms.data()), prSuccess) << prGetLastError();
  }
  ~InspectWorld() {
    for (prComm_t c : comms) {
      if (c != nullptr) {
        EXPECT_EQ(prCommDestroy(c), prSuccess);
      }
    }
    EXPECT_EQ(prSimWorldDestroy(world), prSuccess);
  }
  // Runs `body(rank)` on one thread per rank (collective calls).
  void onEveryRank(const std::function<void(int)>& body) const {
    std::vector<std::thread> threads;
    for (int r = 0; r < static_cast<int>(comms.size()); ++r) threads.emplace_back(body, r);
    for (auto& t : threads) t.join();
  }
};

TEST(CApiInspect, ExplainSelectionSaysWhatAllreduceChoosesAndWhy) {
  InspectWorld w(4);
  prSelection_t selection{};
  ASSERT_EQ(prCommExplainSelection(w.comms[0], 1 << 20, prFloat32, &selection), prSuccess) << prGetLastError();
  EXPECT_GE(selection.ncandidates, 2);
  EXPECT_LE(selection.ncandidates, PR_MAX_CANDIDATES);
  EXPECT_EQ(selection.forced, 0);
  EXPECT_NE(std::string(selection.plan), "");
  for (int i = 1; i < selection.ncandidates; ++i) {
    EXPECT_LE(selection.candidates[i - 1].predicted_us, selection.candidates[i].predicted_us) << "cheapest first";
  }
  EXPECT_EQ(selection.candidates[0].algorithm, selection.chosen) << "the model's pick is its cheapest";
  // A forced algorithm says so.
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess);
  config.algorithm = prAlgoRing;
  InspectWorld forced(4, &config);
  ASSERT_EQ(prCommExplainSelection(forced.comms[2], 4096, prFloat16, &selection), prSuccess) << prGetLastError();
  EXPECT_EQ(selection.chosen, prAlgoRing);
  EXPECT_EQ(selection.forced, 1);
  EXPECT_TRUE(contains(selection.plan, "ring")) << selection.plan;
  // Bad arguments.
  EXPECT_EQ(prCommExplainSelection(w.comms[0], 16, prFloat32, nullptr), prInvalidArgument);
  EXPECT_EQ(prCommExplainSelection(w.comms[0], 16, static_cast<prDataType_t>(77), &selection), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "dtype")) << prGetLastError();
  EXPECT_EQ(prCommExplainSelection(nullptr, 16, prFloat32, &selection), prInvalidArgument);
}

TEST(CApiInspect, ExplainCollectiveSaysWhatEveryCollectiveChoosesAndBuildsItsPlans) {
  InspectWorld w(4);
  prSelection_t selection{};
  for (prCollective_t collective : {prCollAllReduce, prCollReduceScatter, prCollAllGather, prCollBroadcast}) {
    ASSERT_EQ(prCommExplainCollective(w.comms[1], collective, 4096, prBFloat16, 3, &selection), prSuccess)
        << prGetLastError();
    EXPECT_GE(selection.ncandidates, 1) << collective;
    EXPECT_EQ(selection.candidates[0].algorithm, selection.chosen) << collective;
    EXPECT_NE(std::string(selection.plan), "") << collective;
  }
  // Allreduce's answer is prCommExplainSelection's.
  prSelection_t allreduce{};
  ASSERT_EQ(prCommExplainSelection(w.comms[1], 1 << 20, prFloat32, &allreduce), prSuccess);
  ASSERT_EQ(prCommExplainCollective(w.comms[1], prCollAllReduce, 1 << 20, prFloat32, 0, &selection), prSuccess);
  EXPECT_EQ(selection.chosen, allreduce.chosen);
  EXPECT_EQ(std::string(selection.plan), std::string(allreduce.plan));
  // Bad arguments, each named.
  EXPECT_EQ(prCommExplainCollective(w.comms[0], prCollBroadcast, 16, prFloat32, 4, &selection), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "root 4")) << prGetLastError();
  EXPECT_EQ(prCommExplainCollective(w.comms[0], static_cast<prCollective_t>(9), 16, prFloat32, 0, &selection),
            prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "collective")) << prGetLastError();
  EXPECT_EQ(prCommExplainCollective(w.comms[0], prCollAllGather, 16, static_cast<prDataType_t>(77), 0, &selection),
            prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "dtype")) << prGetLastError();
  EXPECT_EQ(prCommExplainCollective(w.comms[0], prCollAllGather, 16, prFloat32, 0, nullptr), prInvalidArgument);
  EXPECT_EQ(prCommExplainCollective(nullptr, prCollAllGather, 16, prFloat32, 0, &selection), prInvalidArgument);
}

TEST(CApiInspect, PinnedStatsReportTheLimitAndRefuseNulls) {
  InspectWorld w(2);
  prPinnedStats_t stats{};
  ASSERT_EQ(prCommPinnedStats(w.comms[1], &stats), prSuccess) << prGetLastError();
  EXPECT_GT(stats.limit_bytes, 0u);
  EXPECT_LE(stats.bytes_in_use, stats.bytes_pinned);
  EXPECT_EQ(prCommPinnedStats(w.comms[1], nullptr), prInvalidArgument);
  EXPECT_EQ(prCommPinnedStats(nullptr, &stats), prInvalidArgument);
}

TEST(CApiInspect, BuffersRegisterAndDeregisterCollectively) {
  InspectWorld w(3);
  std::vector<std::vector<float>> buffers(3, std::vector<float>(256, 1.0f));
  std::vector<prRegisteredBuffer_t> handles(3, nullptr);
  std::vector<prResult_t> results(3);
  w.onEveryRank([&](int r) { results[r] = prCommRegisterBuffer(w.comms[r], buffers[r].data(), 1024, &handles[r]); });
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(results[r], prSuccess) << prGetLastError();
    ASSERT_NE(handles[r], nullptr);
  }
  w.onEveryRank([&](int r) { results[r] = prCommDeregisterBuffer(w.comms[r], handles[r]); });
  for (int r = 0; r < 3; ++r) EXPECT_EQ(results[r], prSuccess);
  // The handles are gone: a second deregistration is refused without touching them.
  EXPECT_EQ(prCommDeregisterBuffer(w.comms[0], handles[0]), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "not a live handle")) << prGetLastError();
  prRegisteredBuffer_t none = reinterpret_cast<prRegisteredBuffer_t>(&w);
  EXPECT_EQ(prCommRegisterBuffer(w.comms[0], buffers[0].data(), 16, nullptr), prInvalidArgument);
  EXPECT_EQ(prCommRegisterBuffer(nullptr, buffers[0].data(), 16, &none), prInvalidArgument);
  EXPECT_EQ(none, nullptr) << "the out-handle is cleared on failure";
}

TEST(CApiRecovery, ReportAgreeAndShrinkAWorldWithoutFailures) {
  InspectWorld w(3);
  std::vector<prBootstrap_t> old_bootstraps(3);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(prSimWorldBootstrap(w.world, r, &old_bootstraps[r]), prSuccess);
  }
  std::vector<prFailureDecision_t> decisions(3);
  std::vector<prResult_t> results(3);
  w.onEveryRank([&](int r) {
    prCommAbort(w.comms[r]);
    prFailureReport_t report{};
    results[r] = prCommFailureReport(w.comms[r], &report);
    if (results[r] == prSuccess) {
      EXPECT_EQ(report.rank, r);
      EXPECT_EQ(report.lost_ranks, 0u) << "nothing failed";
      results[r] = prCommAgreeOnFailures(w.comms[r], old_bootstraps[r], &report, 5000, &decisions[r]);
    }
  });
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(results[r], prSuccess) << prGetLastError();
    EXPECT_EQ(decisions[r].survivors, 0b111u);
    EXPECT_EQ(decisions[r].failed, 0u);
  }
  // The survivors make a new world of their own and shrink onto it.
  prSimWorld_t next = nullptr;
  ASSERT_EQ(prSimWorldCreate(3, 4, &next), prSuccess);
  std::vector<prBootstrap_t> next_bootstraps(3);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(prSimWorldBootstrap(next, r, &next_bootstraps[r]), prSuccess);
  }
  std::vector<prComm_t> shrunk(3, nullptr);
  w.onEveryRank([&](int r) { results[r] = prCommShrink(w.comms[r], &decisions[r], next_bootstraps[r], &shrunk[r]); });
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(results[r], prSuccess) << prGetLastError();
    int size = 0;
    EXPECT_EQ(prCommSize(shrunk[r], &size), prSuccess);
    EXPECT_EQ(size, 3);
  }
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(prCommDestroy(shrunk[r]), prSuccess);
    EXPECT_EQ(prBootstrapDestroy(next_bootstraps[r]), prSuccess);
    EXPECT_EQ(prBootstrapDestroy(old_bootstraps[r]), prSuccess);
  }
  EXPECT_EQ(prSimWorldDestroy(next), prSuccess);
}

TEST(CApiRecovery, ARankDeclaredFailedLeavesAndBadReportsAreRefused) {
  InspectWorld w(3);
  prSimWorld_t next = nullptr;
  ASSERT_EQ(prSimWorldCreate(2, 4, &next), prSuccess);
  prBootstrap_t b = nullptr;
  ASSERT_EQ(prSimWorldBootstrap(next, 0, &b), prSuccess);
  prFailureDecision_t decision{};
  decision.rank = 2;
  decision.survivors = 0b011;
  decision.failed = 0b100;
  prComm_t out = reinterpret_cast<prComm_t>(&w);
  EXPECT_EQ(prCommShrink(w.comms[2], &decision, b, &out), prPeerLost);
  EXPECT_TRUE(contains(prGetLastError(), "rank 2 was declared failed")) << prGetLastError();
  EXPECT_EQ(out, nullptr);
  decision.failed = 0b110;  // overlaps the survivors
  EXPECT_EQ(prCommShrink(w.comms[0], &decision, b, &out), prInvalidArgument);
  prFailureReport_t report{};
  report.rank = 0;
  report.lost_ranks = std::uint64_t{1} << 5;  // outside a world of 3
  prFailureDecision_t got{};
  EXPECT_EQ(prCommAgreeOnFailures(w.comms[0], b, &report, 100, &got), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "outside a world of 3")) << prGetLastError();
  report.lost_ranks = 0;
  EXPECT_EQ(prCommAgreeOnFailures(w.comms[0], b, &report, 0, &got), prInvalidArgument);
  EXPECT_EQ(prCommFailureReport(w.comms[0], nullptr), prInvalidArgument);
  EXPECT_EQ(prBootstrapDestroy(b), prSuccess);
  EXPECT_EQ(prSimWorldDestroy(next), prSuccess);
}

}  // namespace
