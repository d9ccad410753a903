// The table from the real NCCL's communicator handles to peerreduce's state: found by handle, refused when
// the handle is null or already live or the table is full, removed once, shared with the calls using it,
// and safe from many threads at once.
#include "nccl/comm_table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace peerreduce::nccl {
namespace {

std::shared_ptr<ShadowedComm> stateOf(std::uintptr_t handle) {
  auto comm = std::make_shared<ShadowedComm>();
  comm->real = reinterpret_cast<void*>(handle);
  return comm;
}

TEST(Core, CommTableFindsStateByTheRealHandle) {
  CommTable table;
  auto first = stateOf(0x1000);
  ASSERT_TRUE(table.add(first).isOk());
  EXPECT_EQ(table.find(reinterpret_cast<void*>(0x1000)), first);
  EXPECT_EQ(table.find(reinterpret_cast<void*>(0x2000)), nullptr) << "a handle it lacks";
  EXPECT_EQ(table.find(nullptr), nullptr);
  EXPECT_EQ(table.size(), 1u);
}

TEST(Core, CommTableRefusesNullDuplicateAndOverflow) {
  CommTable table(2);
  const Status null_handle = table.add(stateOf(0));
  EXPECT_EQ(null_handle.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(table.add(nullptr).code(), ErrorCode::kInvalidArgument);
  ASSERT_TRUE(table.add(stateOf(0x10)).isOk());
  const Status twice = table.add(stateOf(0x10));
  EXPECT_EQ(twice.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(twice.message().find("already live"), std::string::npos) << twice.message();
  ASSERT_TRUE(table.add(stateOf(0x20)).isOk());
  const Status full = table.add(stateOf(0x30));
  EXPECT_EQ(full.code(), ErrorCode::kUnavailable);
  EXPECT_NE(full.message().find("2 NCCL communicators"), std::string::npos) << full.message();
  EXPECT_EQ(table.size(), 2u);
  // Room again once one is removed.
  EXPECT_NE(table.remove(reinterpret_cast<void*>(0x10)), nullptr);
  EXPECT_TRUE(table.add(stateOf(0x30)).isOk());
}

TEST(Core, CommTableRemovesOnceAndCallsKeepWhatTheyFound) {
  CommTable table;
  ASSERT_TRUE(table.add(stateOf(0x40)).isOk());
  std::shared_ptr<ShadowedComm> held = table.find(reinterpret_cast<void*>(0x40));  // a call in flight
  std::weak_ptr<ShadowedComm> watch = held;
  std::shared_ptr<ShadowedComm> removed = table.remove(reinterpret_cast<void*>(0x40));
  EXPECT_EQ(removed, held);
  EXPECT_EQ(table.remove(reinterpret_cast<void*>(0x40)), nullptr) << "a second removal";
  EXPECT_EQ(table.find(reinterpret_cast<void*>(0x40)), nullptr);
  removed.reset();
  EXPECT_FALSE(watch.expired()) << "the call still holds it";
  held.reset();
  EXPECT_TRUE(watch.expired()) << "freed with the last holder";
}

TEST(Core, CommTableFromManyThreads) {
  CommTable table;
  constexpr int kThreads = 8;
  constexpr std::uintptr_t kPerThread = 200;
  std::vector<std::thread> threads;
  std::vector<int> mismatches(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (std::uintptr_t i = 1; i <= kPerThread; ++i) {
        const std::uintptr_t handle = (static_cast<std::uintptr_t>(t) << 20) | (i << 4);
        if (!table.add(stateOf(handle)).isOk()) ++mismatches[static_cast<std::size_t>(t)];
        auto found = table.find(reinterpret_cast<void*>(handle));
        if (found == nullptr || found->real != reinterpret_cast<void*>(handle))
          ++mismatches[static_cast<std::size_t>(t)];
        if (i % 2 == 0 && table.remove(reinterpret_cast<void*>(handle)) == nullptr) {
          ++mismatches[static_cast<std::size_t>(t)];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[static_cast<std::size_t>(t)], 0) << "thread " << t;
  EXPECT_EQ(table.size(), kThreads * kPerThread / 2);
}

}  // namespace
}  // namespace peerreduce::nccl
