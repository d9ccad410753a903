// ncclCommAbort from another thread (PyTorch's watchdog aborts a communicator whose collective outlived the
// process group's timeout) never crashes the library: while taken calls run on every rank, while the
// communicator is being destroyed, and before the end of the group that created it. Each repeats over rounds
// with the abort at different moments. The verdict here: every call returns, with a result NCCL gives in
// that state; the sanitizer builds of ctest (ASan, TSan) judge the memory and the races.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "nccl_api_support.h"
#include "scoped_env.h"

namespace peerreduce::nccl::testing {
namespace {

using peerreduce::testing::ScopedEnv;

constexpr int kAbortRaceRanks = 2;
constexpr int kAbortRaceRounds = 8;
// Calls each rank makes at most per round: the abort lands among them, or after the last.
constexpr int kMaxCallsPerRound = 200;
// How long a thread waits for the others to start before the round fails.
constexpr std::chrono::seconds kStartLimit{10};

// What a call may answer once its communicator is being aborted: success (it finished first), peerreduce's
// aborted communicator (ncclInvalidUsage), a wait ended by the abort (ncclRemoteError), or the real NCCL
// refusing a handle that no longer exists (ncclInvalidArgument).
bool resultOfAnAbortedCall(ncclResult_t result) {
  return result == ncclSuccess || result == ncclInvalidUsage || result == ncclRemoteError ||
         result == ncclInvalidArgument;
}

// Spins until `count` reaches `target` or the limit passes; false on the limit.
bool waitFor(const std::atomic<int>& count, int target) {
  const auto deadline = std::chrono::steady_clock::now() + kStartLimit;
  while (count.load() < target) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(Api, AbortFromAnotherThreadWhileTakenCallsRunNeverCrashes) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  // The summary is printed as the communicator goes, from counters the calls in flight still write.
  const ScopedEnv summary("PEERREDUCE_NCCL_SUMMARY", "1");
  for (int round = 0; round < kAbortRaceRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto comms = makeComms(kAbortRaceRanks);
    ASSERT_FALSE(::testing::Test::HasFailure());
    std::atomic<int> started{0};
    std::vector<std::vector<ncclResult_t>> results(kAbortRaceRanks);
    std::vector<ncclResult_t> aborted(kAbortRaceRanks, ncclInternalError);
    ::testing::internal::CaptureStderr();
    std::thread watchdog([&] {
      if (!waitFor(started, kAbortRaceRanks)) return;
      // Round 0 aborts at once, later rounds after the calls have run a while.
      std::this_thread::sleep_for(std::chrono::microseconds(round * 400));
      for (int r = 0; r < kAbortRaceRanks; ++r) aborted[static_cast<std::size_t>(r)] = ncclCommAbort(comms[r]);
    });
    onRanks(kAbortRaceRanks, [&](int rank) {
      const auto r = static_cast<std::size_t>(rank);
      std::vector<float> data(256, 1.0f);
      ++started;
      for (int i = 0; i < kMaxCallsPerRound; ++i) {
        const ncclResult_t result =
            ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comms[r], nullptr);
        results[r].push_back(result);
        if (result != ncclSuccess) break;
      }
    });
    watchdog.join();
    const std::string printed = ::testing::internal::GetCapturedStderr();
    for (int rank = 0; rank < kAbortRaceRanks; ++rank) {
      const auto r = static_cast<std::size_t>(rank);
      EXPECT_EQ(aborted[r], ncclSuccess) << "rank " << rank;
      for (const ncclResult_t result : results[r]) {
        EXPECT_TRUE(resultOfAnAbortedCall(result)) << "rank " << rank << ": " << ncclGetErrorString(result);
      }
      EXPECT_NE(printed.find("peerreduce nccl summary: rank " + std::to_string(rank)), std::string::npos) << printed;
    }
  }
}

TEST(Api, AbortFromAnotherThreadWhileTheCommunicatorIsDestroyedNeverCrashes) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  for (int round = 0; round < kAbortRaceRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto comms = makeComms(kAbortRaceRanks);
    ASSERT_FALSE(::testing::Test::HasFailure());
    expectTakenSums(comms);
    std::atomic<int> ready{0};
    std::vector<ncclResult_t> destroyed(kAbortRaceRanks, ncclInternalError);
    std::vector<ncclResult_t> aborted(kAbortRaceRanks, ncclInternalError);
    // One thread destroys the communicators in order, the other aborts them in the opposite order, so
    // every round has each handle ended by both, at moments that differ from round to round.
    std::thread destroyer([&] {
      ++ready;
      if (!waitFor(ready, 2)) return;
      for (int r = 0; r < kAbortRaceRanks; ++r) destroyed[static_cast<std::size_t>(r)] = ncclCommDestroy(comms[r]);
    });
    std::thread aborter([&] {
      ++ready;
      if (!waitFor(ready, 2)) return;
      std::this_thread::sleep_for(std::chrono::microseconds(round * 50));
      for (int r = kAbortRaceRanks - 1; r >= 0; --r) aborted[static_cast<std::size_t>(r)] = ncclCommAbort(comms[r]);
    });
    destroyer.join();
    aborter.join();
    for (int rank = 0; rank < kAbortRaceRanks; ++rank) {
      const auto r = static_cast<std::size_t>(rank);
      // The real NCCL ends each communicator once: one of the two succeeds, the other finds no communicator.
      const std::set<ncclResult_t> answers = {destroyed[r], aborted[r]};
      EXPECT_EQ(answers, (std::set<ncclResult_t>{ncclSuccess, ncclInvalidArgument}))
          << "rank " << rank << ": destroy " << ncclGetErrorString(destroyed[r]) << ", abort "
          << ncclGetErrorString(aborted[r]);
    }
  }
}

// The communicators a group creates are the application's as soon as the creation calls return; one aborted
// from another thread before the group ends is left out when the group completes the others.
TEST(Api, AbortBeforeTheEndOfTheGroupThatCreatedTheCommunicatorNeverCrashes) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  ncclUniqueId id{};
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(kAbortRaceRanks, nullptr);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int rank = 0; rank < kAbortRaceRanks; ++rank) {
    ASSERT_EQ(ncclCommInitRank(&comms[static_cast<std::size_t>(rank)], kAbortRaceRanks, id, rank), ncclSuccess);
  }
  std::vector<ncclResult_t> aborted(kAbortRaceRanks, ncclInternalError);
  std::thread watchdog([&] {
    for (int r = 0; r < kAbortRaceRanks; ++r) aborted[static_cast<std::size_t>(r)] = ncclCommAbort(comms[r]);
  });
  watchdog.join();
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int rank = 0; rank < kAbortRaceRanks; ++rank) {
    EXPECT_EQ(aborted[static_cast<std::size_t>(rank)], ncclSuccess);
    // Gone: the real NCCL refuses the handle, as without this library.
    std::vector<float> data(8, 1.0f);
    EXPECT_EQ(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum,
                            comms[static_cast<std::size_t>(rank)], nullptr),
              ncclInvalidArgument);
  }
}

}  // namespace
}  // namespace peerreduce::nccl::testing
