// Groups: when every call is taken, the allreduces become one prAllReduceBatch at the outermost
// ncclGroupEnd (nesting counted); a group with one call that is not taken goes to the real NCCL whole, in
// the application's order.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "nccl_api_support.h"
#include "scoped_env.h"

namespace peerreduce::nccl::testing {
namespace {

using peerreduce::testing::ScopedEnv;

constexpr int kGroupsRanks = 3;

TEST(Api, GroupOfTakenCallsRunsAtItsEndWithNcclResults) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(kGroupsRanks);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  real.reset();
  const std::size_t counts[] = {1, 17, 256, 1000, 4097};
  std::vector<std::vector<std::vector<std::int64_t>>> results(kGroupsRanks);
  std::vector<std::vector<std::int64_t>> before_end(kGroupsRanks);
  onRanks(kGroupsRanks, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    ncclComm_t comm = comms[r];
    for (std::size_t count : counts) results[r].emplace_back(count, static_cast<std::int64_t>(rank + 1));
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);  // nested: only the outermost end runs the group
    for (auto& tensor : results[r]) {
      EXPECT_EQ(ncclAllReduce(tensor.data(), tensor.data(), tensor.size(), ncclInt64, ncclSum, comm, nullptr),
                ncclSuccess);
    }
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
    before_end[r] = results[r].back();
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(comm);
  });
  const std::int64_t total = kGroupsRanks * (kGroupsRanks + 1) / 2;
  for (int rank = 0; rank < kGroupsRanks; ++rank) {
    const auto r = static_cast<std::size_t>(rank);
    EXPECT_EQ(before_end[r].front(), rank + 1) << "rank " << rank << ": the group ran before its outermost end";
    for (const auto& tensor : results[r]) {
      for (std::int64_t value : tensor) ASSERT_EQ(value, total) << "rank " << rank;
    }
    // The real NCCL saw the group open and close (twice, nested), and none of its calls.
    EXPECT_EQ(real.callsOf("ncclGroupStart").size(), 2u * kGroupsRanks);
    EXPECT_EQ(real.callsOf("ncclGroupEnd").size(), 2u * kGroupsRanks);
    EXPECT_TRUE(real.callsOf("ncclAllReduce").empty());
  }
  destroyComms(comms);
}

// The allreduces of a group are one prAllReduceBatch: two that overlap are refused by it (a batch's items
// must not overlap), which separate allreduces would not be.
TEST(Api, GroupAllreducesAreOneBatch) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(kGroupsRanks);
  ASSERT_FALSE(::testing::Test::HasFailure());
  std::vector<ncclResult_t> ended(kGroupsRanks, ncclSuccess);
  std::vector<std::string> messages(kGroupsRanks);
  onRanks(kGroupsRanks, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    std::vector<float> buffer(64, 1.0f);
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(buffer.data(), buffer.data(), 32, ncclFloat32, ncclSum, comms[r], nullptr), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(buffer.data() + 16, buffer.data() + 16, 32, ncclFloat32, ncclSum, comms[r], nullptr),
              ncclSuccess);
    ended[r] = ncclGroupEnd();
    messages[r] = ncclGetLastError(comms[r]);
  });
  for (int rank = 0; rank < kGroupsRanks; ++rank) {
    const auto r = static_cast<std::size_t>(rank);
    EXPECT_EQ(ended[r], ncclInvalidArgument) << messages[r];
    EXPECT_NE(messages[r].find("prAllReduceBatch"), std::string::npos) << messages[r];
    EXPECT_NE(messages[r].find("overlap"), std::string::npos) << messages[r];
  }
  destroyComms(comms);
}

TEST(Api, GroupWithACallNotTakenIsForwardedWholeInOrder) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(kGroupsRanks);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  real.reset();
  std::vector<std::vector<float>> buffers(kGroupsRanks, std::vector<float>(8, 1.0f));
  onRanks(kGroupsRanks, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    float* data = buffers[r].data();
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(data, data, 2, ncclFloat32, ncclSum, comms[r], nullptr), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(data + 2, data + 2, 2, ncclFloat32, ncclAvg, comms[r], nullptr), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(data + 4, data + 4, 2, ncclFloat32, ncclSum, comms[r], nullptr), ncclSuccess);
    EXPECT_EQ(ncclSend(data + 6, 1, ncclFloat32, (rank + 1) % kGroupsRanks, comms[r], nullptr), ncclSuccess);
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  });
  for (int rank = 0; rank < kGroupsRanks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    std::vector<std::string> order;
    std::vector<std::uint64_t> counts;
    for (const NcclTestDoubleCall& call : real.calls()) {
      if (call.comm_rank == rank) {
        order.emplace_back(call.function);
        counts.push_back(call.args[0]);
      }
    }
    // The first allreduce was kept, then forwarded ahead of the avg that made the group NCCL's.
    ASSERT_EQ(order, (std::vector<std::string>{"ncclAllReduce", "ncclAllReduce", "ncclAllReduce", "ncclSend"}));
    const float* data = buffers[static_cast<std::size_t>(rank)].data();
    EXPECT_EQ(counts[0], reinterpret_cast<std::uintptr_t>(data));
    EXPECT_EQ(counts[1], reinterpret_cast<std::uintptr_t>(data + 2));
    EXPECT_EQ(counts[2], reinterpret_cast<std::uintptr_t>(data + 4));
    // Nothing ran on peerreduce's side: the double computes nothing.
    for (float value : buffers[static_cast<std::size_t>(rank)]) EXPECT_EQ(value, 1.0f);
  }
  EXPECT_EQ(real.callsOf("ncclGroupStart").size(), static_cast<std::size_t>(kGroupsRanks));
  EXPECT_EQ(real.callsOf("ncclGroupEnd").size(), static_cast<std::size_t>(kGroupsRanks));
  destroyComms(comms);
}

}  // namespace
}  // namespace peerreduce::nccl::testing
