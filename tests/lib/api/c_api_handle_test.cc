// Handles the C API no longer (or never) owns: a communicator or world used after its destroy call,
// destroyed twice, or a pointer that never was a handle. Each is refused with prInvalidArgument and a
// message naming the argument, without the library reading the pointed-to memory (ASan would report
// a heap-use-after-free otherwise).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "peerreduce/peerreduce_sim.h"
#include "text_contains.h"

namespace {

using peerreduce::testing::contains;

void expectStale(prResult_t result, const char* function, const char* argument) {
  EXPECT_EQ(result, prInvalidArgument) << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), function)) << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), argument)) << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), "not a live handle")) << prGetLastError();
}

struct World {
  prSimWorld_t world = nullptr;
  std::vector<prComm_t> comms;

  explicit World(int n) : comms(static_cast<std::size_t>(n), nullptr) {
    EXPECT_EQ(prSimWorldCreate(n, 1, &world), prSuccess) << prGetLastError();
    EXPECT_EQ(prCommInitSimAll(world, nullptr, comms.data()), prSuccess) << prGetLastError();
  }
};

TEST(CApiHandles, EveryCommunicatorFunctionRefusesADestroyedCommunicator) {
  World w(2);
  ASSERT_NE(w.comms[0], nullptr);
  prComm_t stale = w.comms[0];
  ASSERT_EQ(prCommDestroy(stale), prSuccess) << prGetLastError();

  float buffer[4] = {1, 2, 3, 4};
  int value = -7;
  prMemoryStats_t stats{};
  expectStale(prAllReduce(buffer, buffer, 4, prFloat32, prSum, stale, nullptr), "prAllReduce", "comm");
  expectStale(prCommSynchronize(stale, nullptr), "prCommSynchronize", "comm");
  expectStale(prCommGetAsyncError(stale), "prCommGetAsyncError", "comm");
  expectStale(prCommRank(stale, &value), "prCommRank", "comm");
  expectStale(prCommSize(stale, &value), "prCommSize", "comm");
  expectStale(prCommMemoryStats(stale, &stats), "prCommMemoryStats", "comm");
  prProfileSummary_t summary{};
  expectStale(prCommEnableProfiling(stale, 4), "prCommEnableProfiling", "comm");
  expectStale(prCommDisableProfiling(stale), "prCommDisableProfiling", "comm");
  expectStale(prCommProfileSummary(stale, &summary), "prCommProfileSummary", "comm");
  expectStale(prCommDestroy(stale), "prCommDestroy", "comm");
  EXPECT_EQ(value, -7);
  EXPECT_FLOAT_EQ(buffer[0], 1.0f);

  // The other rank's communicator is unaffected.
  EXPECT_EQ(prCommRank(w.comms[1], &value), prSuccess) << prGetLastError();
  EXPECT_EQ(value, 1);
  EXPECT_EQ(prCommDestroy(w.comms[1]), prSuccess) << prGetLastError();
  EXPECT_EQ(prSimWorldDestroy(w.world), prSuccess) << prGetLastError();
}

TEST(CApiHandles, EveryWorldFunctionRefusesADestroyedWorld) {
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(2, 1, &world), prSuccess) << prGetLastError();
  ASSERT_EQ(prSimWorldDestroy(world), prSuccess) << prGetLastError();

  std::vector<prComm_t> comms(2, reinterpret_cast<prComm_t>(&world));  // must come back NULL
  prComm_t comm = reinterpret_cast<prComm_t>(&world);
  expectStale(prSimWorldRun(world), "prSimWorldRun", "world");
  expectStale(prCommInitSimAll(world, nullptr, comms.data()), "prCommInitSimAll", "world");
  expectStale(prCommInitSimRank(world, 0, nullptr, &comm), "prCommInitSimRank", "world");
  expectStale(prSimWorldDestroy(world), "prSimWorldDestroy", "world");
  EXPECT_EQ(comm, nullptr);
  // A destroyed world's size is unknown, so prCommInitSimAll cannot clear the array: it leaves it as is.
  EXPECT_EQ(comms[0], reinterpret_cast<prComm_t>(&world));
}

TEST(CApiHandles, APointerThatNeverWasAHandleIsRefusedWithoutBeingRead) {
  // Bytes that would make a communicator's fields garbage if the library dereferenced them.
  alignas(64) unsigned char bogus[256];
  for (auto& b : bogus) b = 0xa5;
  auto* comm = reinterpret_cast<prComm_t>(bogus);
  auto* world = reinterpret_cast<prSimWorld_t>(bogus);
  int value = 0;
  expectStale(prCommRank(comm, &value), "prCommRank", "comm");
  expectStale(prCommDestroy(comm), "prCommDestroy", "comm");
  expectStale(prSimWorldRun(world), "prSimWorldRun", "world");
  expectStale(prSimWorldDestroy(world), "prSimWorldDestroy", "world");
}

TEST(CApiHandles, HandlesMadeByInitSimRankAreLiveUntilDestroyed) {
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(1, 1, &world), prSuccess) << prGetLastError();
  prComm_t comm = nullptr;
  ASSERT_EQ(prCommInitSimRank(world, 0, nullptr, &comm), prSuccess) << prGetLastError();
  int size = 0;
  EXPECT_EQ(prCommSize(comm, &size), prSuccess) << prGetLastError();
  EXPECT_EQ(size, 1);
  EXPECT_EQ(prCommDestroy(comm), prSuccess) << prGetLastError();
  expectStale(prCommSize(comm, &size), "prCommSize", "comm");
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess) << prGetLastError();
}

}  // namespace
