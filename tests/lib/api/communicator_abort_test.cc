// Communicator::abort: every later call is refused with kAborted and writes nothing; an operation
// blocked on a peer that never comes ends promptly instead of waiting for its timeout; every rank may
// abort at once.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "peerreduce/communicator.h"
#include "peerreduce/peerreduce_sim.h"
#include "sim_cluster.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

std::unique_ptr<sim::SimCluster> makeAbortCluster(int n) {
  Config config;
  config.memory.pool_bytes = std::size_t{4} << 20;
  config.scratch_bytes = std::size_t{1} << 20;
  auto cluster = sim::SimCluster::create(n, {}, config);
  EXPECT_TRUE(cluster.isOk()) << cluster.status().toString();
  return cluster.isOk() ? std::move(cluster).value() : nullptr;
}

TEST(CommunicatorAbort, LaterCallsAreRefusedAndWriteNothing) {
  auto cluster = makeAbortCluster(2);
  ASSERT_NE(cluster, nullptr);
  Communicator& comm = cluster->comm(0);
  EXPECT_FALSE(comm.aborted());
  comm.abort();
  EXPECT_TRUE(comm.aborted());
  std::vector<float> send(64, 1.0f), recv(64, -3.0f);
  const Status s = comm.allreduce(send.data(), recv.data(), send.size(), DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(s.code(), ErrorCode::kAborted) << s.toString();
  EXPECT_TRUE(contains(s.message(), "rank 0: allreduce on a communicator that was aborted")) << s.message();
  for (float v : recv) ASSERT_EQ(v, -3.0f);
  EXPECT_EQ(comm.synchronize().code(), ErrorCode::kAborted);
  EXPECT_EQ(comm.asyncError().code(), ErrorCode::kAborted);
  auto registered = comm.registerBuffer(recv.data(), recv.size() * sizeof(float));
  EXPECT_EQ(registered.status().code(), ErrorCode::kAborted) << registered.status().toString();
  // The other rank's communicator is its own: not aborted.
  EXPECT_FALSE(cluster->comm(1).aborted());
}

TEST(CommunicatorAbort, EndsAnOperationWaitingForAPeerThatNeverComes) {
  auto cluster = makeAbortCluster(2);
  ASSERT_NE(cluster, nullptr);
  std::vector<float> send(256, 2.0f), recv(256, -1.0f);
  // Only rank 0 enqueues: its plan waits for rank 1 forever (until the timeout, 30 s by default).
  ASSERT_TRUE(
      cluster->comm(0).allreduce(send.data(), recv.data(), send.size(), DataType::kFloat32, ReduceOp::kSum).isOk());
  std::thread aborter([&] { cluster->comm(0).abort(); });
  aborter.join();
  const Status run = cluster->runUntilIdle();
  EXPECT_FALSE(run.isOk());
  EXPECT_EQ(cluster->comm(0).synchronize().code(), ErrorCode::kAborted);
}

TEST(CommunicatorAbort, EveryRankMayAbortAtOnce) {
  auto cluster = makeAbortCluster(4);
  ASSERT_NE(cluster, nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r) threads.emplace_back([&, r] { cluster->comm(r).abort(); });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 4; ++r) EXPECT_TRUE(cluster->comm(r).aborted());
}

TEST(CommunicatorAbort, TheCApiAbortsAndRefusesLaterCalls) {
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(2, 1, &world), prSuccess) << prGetLastError();
  std::vector<prComm_t> comms(2, nullptr);
  ASSERT_EQ(prCommInitSimAll(world, nullptr, comms.data()), prSuccess) << prGetLastError();
  EXPECT_EQ(prCommAbort(nullptr), prInvalidArgument);
  EXPECT_EQ(prCommAbort(comms[0]), prSuccess) << prGetLastError();
  float buffer[4] = {1, 2, 3, 4};
  EXPECT_EQ(prAllReduce(buffer, buffer, 4, prFloat32, prSum, comms[0], nullptr), prAborted);
  EXPECT_TRUE(contains(prGetLastError(), "aborted")) << prGetLastError();
  EXPECT_FLOAT_EQ(buffer[0], 1.0f);
  for (prComm_t c : comms) EXPECT_EQ(prCommDestroy(c), prSuccess) << prGetLastError();
  EXPECT_EQ(prCommAbort(comms[0]), prInvalidArgument);  // destroyed: not a live handle
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess) << prGetLastError();
}

}  // namespace
}  // namespace peerreduce
