// Every way NCCL makes a communicator gives one whose peerreduce side works: ncclCommInitAll from one thread,
// ncclCommSplit, creation inside a group, a non-blocking creation; the summary at destruction; and
// PEERREDUCE_DEBUG=INFO's one line per (call, size bucket).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "nccl_api_support.h"
#include "scoped_env.h"
#include "text_contains.h"

namespace peerreduce::nccl::testing {
namespace {

using peerreduce::testing::ScopedEnv;

using peerreduce::testing::contains;

TEST(Api, CommunicatorsOfInitAllFromOneThread) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  std::vector<ncclComm_t> comms(4, nullptr);
  const int devices[4] = {3, 2, 1, 0};
  ASSERT_EQ(ncclCommInitAll(comms.data(), 4, devices), ncclSuccess) << ncclGetLastError(nullptr);
  int device = -1;
  EXPECT_EQ(ncclCommCuDevice(comms[1], &device), ncclSuccess);
  EXPECT_EQ(device, 2);
  expectTakenSums(comms);
  destroyComms(comms);
}

TEST(Api, CommunicatorsOfSplit) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto parents = makeComms(4);
  ASSERT_FALSE(::testing::Test::HasFailure());
  std::vector<ncclComm_t> halves(4, nullptr);
  onRanks(4, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    // Colors by parity; keys reverse the order within a color.
    EXPECT_EQ(ncclCommSplit(parents[r], rank % 2, -rank, &halves[r], nullptr), ncclSuccess)
        << ncclGetLastError(nullptr);
  });
  for (int parity = 0; parity < 2; ++parity) {
    std::vector<ncclComm_t> half = {halves[static_cast<std::size_t>(parity)],
                                    halves[static_cast<std::size_t>(parity + 2)]};
    int size = 0;
    int first_rank = -1;
    EXPECT_EQ(ncclCommCount(half[0], &size), ncclSuccess);
    EXPECT_EQ(ncclCommUserRank(half[0], &first_rank), ncclSuccess);
    EXPECT_EQ(size, 2);
    EXPECT_EQ(first_rank, 1) << "the larger key comes second";
    expectTakenSums(half);
  }
  // A rank without a color gets no communicator.
  std::vector<ncclComm_t> none(4, nullptr);
  onRanks(4, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    EXPECT_EQ(ncclCommSplit(parents[r], rank == 3 ? NCCL_SPLIT_NOCOLOR : 0, rank, &none[r], nullptr), ncclSuccess);
  });
  EXPECT_EQ(none[3], nullptr);
  expectTakenSums({none[0], none[1], none[2]});
  destroyComms({none[0], none[1], none[2]});
  destroyComms(halves);
  destroyComms(parents);
}

TEST(Api, CommunicatorsCreatedInsideAGroupAreCompletedAtItsEnd) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  ncclUniqueId id{};
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(3, nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int rank = 0; rank < 3; ++rank) {
    ASSERT_EQ(ncclCommInitRank(&comms[static_cast<std::size_t>(rank)], 3, id, rank), ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  expectTakenSums(comms);
  destroyComms(comms);
}

// A creation the real NCCL answers with ncclInProgress (non-blocking) is waited for: the application gets a
// ready communicator.
TEST(Api, NonBlockingCreationIsWaitedFor) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  TestDouble::get().setResult("ncclCommInitRankConfig", ncclInProgress);
  ncclUniqueId id{};
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(2, nullptr);
  onRanks(2, [&](int rank) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const auto r = static_cast<std::size_t>(rank);
    EXPECT_EQ(ncclCommInitRankConfig(&comms[r], 2, id, rank, &config), ncclSuccess) << ncclGetLastError(nullptr);
  });
  TestDouble::get().setResult("ncclCommInitRankConfig", ncclSuccess);
  expectTakenSums(comms);
  destroyComms(comms);
}

TEST(Api, SummaryAtDestructionCountsTakenAndForwardedCalls) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  const ScopedEnv summary("PEERREDUCE_NCCL_SUMMARY", "1");
  const ScopedEnv avg_to_nccl("PEERREDUCE_NCCL_TAKE_AVG", "0");  // the avg below is the forwarded call
  auto comms = makeComms(2);
  ASSERT_FALSE(::testing::Test::HasFailure());
  onRanks(2, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    std::vector<float> data(64, 1.0f);
    EXPECT_EQ(ncclAllReduce(data.data(), data.data(), 64, ncclFloat32, ncclSum, comms[r], nullptr), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(data.data(), data.data(), 16, ncclFloat32, ncclSum, comms[r], nullptr), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(data.data(), data.data(), 8, ncclFloat32, ncclAvg, comms[r], nullptr), ncclSuccess);
  });
  ::testing::internal::CaptureStderr();
  destroyComms(comms);
  const std::string printed = ::testing::internal::GetCapturedStderr();
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_TRUE(contains(printed, "peerreduce nccl summary: rank " + std::to_string(rank) +
                                      " of 2: took 2 calls (320 bytes), forwarded 1 call (32 bytes); ncclAllReduce 2 "
                                      "taken / 1 forwarded"))
        << printed;
  }
  // Every call of it was timed: two taken, one forwarded, each side's mean and most.
  EXPECT_TRUE(contains(printed, "; host time per call: taken ")) << printed;
  EXPECT_FALSE(contains(printed, "taken none timed")) << printed;
  EXPECT_FALSE(contains(printed, "forwarded none timed")) << printed;
}

// PEERREDUCE_DEBUG is read once per process, at the first line logged: the check runs in a process of its
// own (a death test) that sets it first.
TEST(Api, InfoLogsEachChoiceOncePerCallAndSizeBucket) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_EXIT(
      {
        ::setenv("PEERREDUCE_DEBUG", "INFO", 1);
        ::setenv("PEERREDUCE_NCCL_TAKE", "auto", 1);
        ::setenv("PEERREDUCE_NCCL_MAX_BYTES", "4K", 1);
        auto comms = makeComms(2);
        ::testing::internal::CaptureStderr();
        onRanks(2, [&](int rank) {
          std::vector<float> data(4096, 1.0f);
          ncclComm_t comm = comms[static_cast<std::size_t>(rank)];
          // 400 and 404 bytes share a size bucket; 8 KiB is another (forwarded: above the limit).
          (void)ncclAllReduce(data.data(), data.data(), 100, ncclFloat32, ncclSum, comm, nullptr);
          (void)ncclAllReduce(data.data(), data.data(), 101, ncclFloat32, ncclSum, comm, nullptr);
          (void)ncclAllReduce(data.data(), data.data(), 2048, ncclFloat32, ncclSum, comm, nullptr);
          (void)ncclAllReduce(data.data(), data.data(), 2048, ncclFloat32, ncclSum, comm, nullptr);
        });
        const std::string printed = ::testing::internal::GetCapturedStderr();
        destroyComms(comms);
        int taken = 0;
        int forwarded = 0;
        for (std::size_t at = printed.find("ncclAllReduce of "); at != std::string::npos;
             at = printed.find("ncclAllReduce of ", at + 1)) {
          const std::string line = printed.substr(at, printed.find('\n', at) - at);
          taken += contains(line, ": peerreduce, ") ? 1 : 0;
          forwarded += contains(line, "forwarded to NCCL, larger than PEERREDUCE_NCCL_MAX_BYTES") ? 1 : 0;
        }
        // One line per rank for each of the two buckets.
        std::fprintf(stderr, "taken lines %d, forwarded lines %d\n%s", taken, forwarded, printed.c_str());
        std::exit(taken == 2 && forwarded == 2 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "taken lines 2, forwarded lines 2");
}

}  // namespace
}  // namespace peerreduce::nccl::testing
