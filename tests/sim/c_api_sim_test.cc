// The simulator half of the C API (sim/c_api_sim.cc), for what tests/api does not reach: creation
// failing inside the ranks (which error is shown when ranks fail differently) and a bad config given
// to prCommInitSimRank.
#include <gtest/gtest.h>

#include <vector>

#include "api/c_api_internal.h"
#include "c_api_sim_internal.h"
#include "peerreduce/peerreduce_sim.h"
#include "peerreduce/simulator.h"
#include "sim_test_util.h"

namespace peerreduce::testing {
namespace {

TEST(CApiSim, InitSimAllTwiceOnOneWorldFailsWithTheCauseAndNullComms) {
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(2, 3, &world), prSuccess) << prGetLastError();
  std::vector<prComm_t> comms(2, nullptr);
  ASSERT_EQ(prCommInitSimAll(world, nullptr, comms.data()), prSuccess) << prGetLastError();
  // A world's ranks can be mapped once; a second set of communicators must fail cleanly.
  std::vector<prComm_t> again(2, comms[0]);
  EXPECT_EQ(prCommInitSimAll(world, nullptr, again.data()), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "prCommInitSimAll")) << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), "already opened its symmetric memory")) << prGetLastError();
  for (prComm_t c : again) EXPECT_EQ(c, nullptr);
  // The first communicators still work.
  std::vector<float> data0(8, 1.0f), data1(8, 2.0f);
  ASSERT_EQ(prAllReduce(data0.data(), data0.data(), 8, prFloat32, prSum, comms[0], nullptr), prSuccess);
  ASSERT_EQ(prAllReduce(data1.data(), data1.data(), 8, prFloat32, prSum, comms[1], nullptr), prSuccess);
  ASSERT_EQ(prSimWorldRun(world), prSuccess) << prGetLastError();
  EXPECT_EQ(data0[7], 3.0f);
  EXPECT_EQ(data1[0], 3.0f);
  for (prComm_t c : comms) EXPECT_EQ(prCommDestroy(c), prSuccess);
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess);
}

TEST(CApiSim, WhenRanksFailDifferentlyTheCauseIsShownNotTheEcho) {
  // Rank 1's memory is already open, so its creation fails with the cause (kInvalidArgument); rank 0
  // only learns "rank 1 could not open its symmetric memory" (kUnavailable). The caller must see the
  // cause, although rank 0 comes first.
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(2, 3, &world), prSuccess) << prGetLastError();
  ASSERT_TRUE(world->world->transport(1)->openSymmetric(kMinScratchBytes).isOk());
  std::vector<prComm_t> comms(2, nullptr);
  EXPECT_EQ(prCommInitSimAll(world, nullptr, comms.data()), prInvalidArgument) << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), "rank 1")) << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), "already opened")) << prGetLastError();
  for (prComm_t c : comms) EXPECT_EQ(c, nullptr);
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess);
}

TEST(CApiSim, InitSimRankRejectsAnInvalidConfigByFieldAndLeavesCommNull) {
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(1, 3, &world), prSuccess) << prGetLastError();
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  config.scratch_bytes = 1;
  int dummy = 0;
  prComm_t comm = reinterpret_cast<prComm_t>(&dummy);
  EXPECT_EQ(prCommInitSimRank(world, 0, &config, &comm), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "prConfig_t")) << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), "scratch")) << prGetLastError();
  EXPECT_EQ(comm, nullptr);
  // Nothing was opened: the same rank can still be created with a good config.
  config.scratch_bytes = kMinScratchBytes;
  ASSERT_EQ(prCommInitSimRank(world, 0, &config, &comm), prSuccess) << prGetLastError();
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(prCommDestroy(comm), prSuccess);
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess);
}

TEST(CApiSim, SimWorldRunReportsTheFirstRankError) {
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(2, 3, &world), prSuccess) << prGetLastError();
  std::vector<prComm_t> comms(2, nullptr);
  ASSERT_EQ(prCommInitSimAll(world, nullptr, comms.data()), prSuccess) << prGetLastError();
  // Only rank 0 enqueues: its wait for rank 1 expires in virtual time, and the run says so.
  std::vector<float> data(16, 1.0f);
  ASSERT_EQ(prAllReduce(data.data(), data.data(), 16, prFloat32, prSum, comms[0], nullptr), prSuccess);
  EXPECT_EQ(prSimWorldRun(world), prTimeout);
  EXPECT_TRUE(contains(prGetLastError(), "prSimWorldRun")) << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), "rank 1 never sent")) << prGetLastError();
  EXPECT_EQ(prCommGetAsyncError(comms[0]), prTimeout);
  for (prComm_t c : comms) EXPECT_EQ(prCommDestroy(c), prSuccess);
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess);
}

}  // namespace
}  // namespace peerreduce::testing
