// The functions this library wraps beyond the 30 most used, each with what it must do with peerreduce's
// side: ncclBcast taken as an in-place broadcast; ncclAlltoAll, ncclGather and ncclScatter forwarded, a
// group holding one forwarded whole; ncclCommInitRankScalable and ncclCommShrink making communicators
// peerreduce serves; ncclCommRevoke and NCCL_SHRINK_ABORT ending peerreduce's side; ncclGroupSimulateEnd
// running nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nccl_api_support.h"
#include "scoped_env.h"

namespace peerreduce::nccl::testing {
namespace {

using peerreduce::testing::ScopedEnv;

std::uint64_t apiNumber(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer); }

TEST(Api, BcastIsTakenAsAnInPlaceBroadcast) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(3);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  real.reset();
  constexpr std::size_t kCount = 37;
  std::vector<std::vector<std::int32_t>> buffers(3);
  onRanks(3, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    buffers[r].assign(kCount, -1);
    if (rank == 1) {
      for (std::size_t i = 0; i < kCount; ++i) buffers[r][i] = static_cast<std::int32_t>(i * 3 + 1);
    }
    EXPECT_EQ(ncclBcast(buffers[r].data(), kCount, ncclInt32, 1, comms[r], nullptr), ncclSuccess)
        << ncclGetLastError(comms[r]);
  });
  for (const auto& buffer : buffers) {
    for (std::size_t i = 0; i < kCount; ++i) ASSERT_EQ(buffer[i], static_cast<std::int32_t>(i * 3 + 1)) << i;
  }
  EXPECT_TRUE(real.callsOf("ncclBcast").empty()) << "taken, not forwarded";
  {
    // In none mode it reaches the real NCCL as ncclBcast, its own name.
    const ScopedEnv none("PEERREDUCE_NCCL_TAKE", "none");
    auto forwarded = makeComms(1);
    ASSERT_FALSE(::testing::Test::HasFailure());
    real.reset();
    EXPECT_EQ(ncclBcast(buffers[0].data(), kCount, ncclInt32, 0, forwarded[0], nullptr), ncclSuccess);
    const auto calls = real.callsOf("ncclBcast");
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].args[0], apiNumber(buffers[0].data()));
    EXPECT_TRUE(real.callsOf("ncclBroadcast").empty());
    destroyComms(forwarded);
  }
  destroyComms(comms);
}

TEST(Api, AlltoAllGatherAndScatterAreForwardedAndMixAGroup) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(1);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  float kept[4] = {1, 2, 3, 4};
  float other[4] = {5, 6, 7, 8};
  const std::vector<std::pair<std::string, std::function<ncclResult_t()>>> calls = {
      {"ncclAlltoAll", [&] { return ncclAlltoAll(other, other, 4, ncclFloat32, comms[0], nullptr); }},
      {"ncclGather", [&] { return ncclGather(other, other, 4, ncclFloat32, 0, comms[0], nullptr); }},
      {"ncclScatter", [&] { return ncclScatter(other, other, 4, ncclFloat32, 0, comms[0], nullptr); }},
  };
  for (const auto& [name, call] : calls) {
    SCOPED_TRACE(name);
    real.reset();
    EXPECT_EQ(call(), ncclSuccess);
    EXPECT_EQ(real.callsOf(name).size(), 1u);
    // In a group after a call peerreduce takes: the group is mixed, so both go to the real group in order.
    real.reset();
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(kept, kept, 4, ncclFloat32, ncclSum, comms[0], nullptr), ncclSuccess);
    EXPECT_EQ(call(), ncclSuccess);
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
    std::vector<std::string> order;
    for (const NcclTestDoubleCall& recorded : real.calls()) order.emplace_back(recorded.function);
    EXPECT_EQ(order, (std::vector<std::string>{"ncclGroupStart", "ncclAllReduce", name, "ncclGroupEnd"}));
  }
  destroyComms(comms);
}

TEST(Api, InitRankScalableMakesACommunicatorPeerreduceServes) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  ncclUniqueId ids[2] = {};
  ASSERT_EQ(ncclGetUniqueId(&ids[0]), ncclSuccess);
  ASSERT_EQ(ncclGetUniqueId(&ids[1]), ncclSuccess);
  std::vector<ncclComm_t> comms(2, nullptr);
  onRanks(2, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    EXPECT_EQ(ncclCommInitRankScalable(&comms[r], 2, rank, 2, ids, nullptr), ncclSuccess) << ncclGetLastError(nullptr);
  });
  ASSERT_FALSE(::testing::Test::HasFailure());
  expectTakenSums(comms);
  destroyComms(comms);
}

// Three ranks; rank 1 is excluded. The two others make a communicator peerreduce serves. With
// NCCL_SHRINK_ABORT the parent's peerreduce side is aborted: the parent's calls are forwarded after.
TEST(Api, ShrinkMakesACommunicatorPeerreduceServes) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  for (const int flags : {NCCL_SHRINK_DEFAULT, NCCL_SHRINK_ABORT}) {
    SCOPED_TRACE(flags);
    auto parents = makeComms(3);
    ASSERT_FALSE(::testing::Test::HasFailure());
    std::vector<ncclComm_t> shrunk(2, nullptr);
    onRanks(2, [&](int index) {
      int excluded[1] = {1};
      const int rank = index == 0 ? 0 : 2;
      EXPECT_EQ(ncclCommShrink(parents[static_cast<std::size_t>(rank)], excluded, 1,
                               &shrunk[static_cast<std::size_t>(index)], nullptr, flags),
                ncclSuccess)
          << ncclGetLastError(nullptr);
    });
    ASSERT_FALSE(::testing::Test::HasFailure());
    expectTakenSums(shrunk);
    TestDouble& real = TestDouble::get();
    real.reset();
    float value = 1;
    // The parent's rank 0 alone: taken it would wait for the others; forwarded, the real NCCL records it.
    if (flags == NCCL_SHRINK_ABORT) {
      EXPECT_EQ(ncclAllReduce(&value, &value, 1, ncclFloat32, ncclSum, parents[0], nullptr), ncclSuccess);
      EXPECT_EQ(real.callsOf("ncclAllReduce", 0).size(), 1u) << "the aborted parent forwards";
    }
    destroyComms(shrunk);
    destroyComms(parents);
  }
}

TEST(Api, RevokeEndsPeerreduceSideAndForwardsAfter) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(2);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  real.reset();
  onRanks(2, [&](int rank) {
    EXPECT_EQ(ncclCommRevoke(comms[static_cast<std::size_t>(rank)], NCCL_REVOKE_DEFAULT), ncclSuccess);
  });
  EXPECT_EQ(real.callsOf("ncclCommRevoke", 0).size(), 1u);
  EXPECT_EQ(real.callsOf("ncclCommRevoke", 1).size(), 1u);
  float value = 1;
  EXPECT_EQ(ncclAllReduce(&value, &value, 1, ncclFloat32, ncclSum, comms[1], nullptr), ncclSuccess);
  EXPECT_EQ(real.callsOf("ncclAllReduce", 1).size(), 1u) << "forwarded after the revoke";
  destroyComms(comms);
}

TEST(Api, GroupSimulateEndRunsNothingAndShowsNcclTheWholeGroup) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(1);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  real.reset();
  float send[4] = {1, 2, 3, 4};
  float recv[4] = {};
  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
  EXPECT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(send, recv, 4, ncclFloat32, ncclSum, comms[0], nullptr), ncclSuccess);
  EXPECT_EQ(ncclGroupSimulateEnd(&info), ncclSuccess);
  EXPECT_EQ(info.estimatedTime, 1.0f) << "the real NCCL's estimate";
  std::vector<std::string> order;
  for (const NcclTestDoubleCall& recorded : real.calls()) order.emplace_back(recorded.function);
  EXPECT_EQ(order, (std::vector<std::string>{"ncclGroupStart", "ncclAllReduce", "ncclGroupSimulateEnd"}));
  EXPECT_EQ(recv[0], 0.0f) << "peerreduce ran nothing";
  // The group is over: the next call outside one runs.
  EXPECT_EQ(ncclAllReduce(send, recv, 4, ncclFloat32, ncclSum, comms[0], nullptr), ncclSuccess);
  EXPECT_EQ(recv[3], 4.0f);
  destroyComms(comms);
}

}  // namespace
}  // namespace peerreduce::nccl::testing
