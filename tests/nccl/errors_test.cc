// Errors: a peerreduce failure is the matching ncclResult_t with peerreduce's message in ncclGetLastError
// (a forwarded failure's message is the real library's), on both communicators' paths: taken calls,
// asynchronous errors, creation, abort, and handles that are not communicators of this library.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "nccl_api_support.h"
#include "scoped_env.h"
#include "text_contains.h"

namespace peerreduce::nccl::testing {
namespace {

using peerreduce::testing::ScopedEnv;

using peerreduce::testing::contains;

TEST(Api, TakenCallFailureIsTheMatchingNcclResultWithPeerreducesMessage) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(2);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  real.reset();
  onRanks(2, [&](int rank) {
    ncclComm_t comm = comms[static_cast<std::size_t>(rank)];
    std::vector<float> buffer(65, 0.0f);
    // A float buffer off its 4-byte alignment: peerreduce refuses it before anything is enqueued.
    void* misaligned = reinterpret_cast<char*>(buffer.data()) + 1;
    EXPECT_EQ(ncclAllReduce(misaligned, misaligned, 16, ncclFloat32, ncclSum, comm, nullptr), ncclInvalidArgument);
    const std::string message = ncclGetLastError(comm);
    EXPECT_TRUE(contains(message, "ncclAllReduce: peerreduce: invalid argument")) << message;
    EXPECT_TRUE(contains(message, "aligned")) << message;
    // A later forwarded failure's message is the real library's again.
    real.setResult("ncclSend", ncclRemoteError);
    EXPECT_EQ(ncclSend(buffer.data(), 1, ncclFloat32, 1 - rank, comm, nullptr), ncclRemoteError);
    EXPECT_STREQ(ncclGetLastError(comm), kNcclTestDoubleLastError);
  });
  real.setResult("ncclSend", ncclSuccess);
  EXPECT_TRUE(real.callsOf("ncclAllReduce").empty());
  destroyComms(comms);
}

// Ranks that disagree on an operation fail it together (the simulator's agreement), and the communicator's
// asynchronous error says so from then on: ncclInvalidUsage with peerreduce's message.
TEST(Api, PeerreduceAsynchronousErrorIsTheCommunicators) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(2);
  ASSERT_FALSE(::testing::Test::HasFailure());
  std::vector<ncclResult_t> results(2), async(2, ncclSuccess);
  std::vector<std::string> messages(2);
  onRanks(2, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    std::vector<float> buffer(256, 1.0f);
    results[r] =
        ncclAllReduce(buffer.data(), buffer.data(), rank == 0 ? 64 : 128, ncclFloat32, ncclSum, comms[r], nullptr);
    EXPECT_EQ(ncclCommGetAsyncError(comms[r], &async[r]), ncclSuccess);
    messages[r] = ncclGetLastError(comms[r]);
  });
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r], ncclInvalidUsage) << messages[r];
    EXPECT_EQ(async[r], ncclInvalidUsage) << messages[r];
    EXPECT_TRUE(contains(messages[r], "ncclCommGetAsyncError: peerreduce: mismatch")) << messages[r];
  }
  destroyComms(comms);
}

// PEERREDUCE_TIMEOUT_MS, when set, bounds the waits of peerreduce's side of an NCCL communicator (unset,
// the NCCL library's long default applies, nccl_settings.h): a rank whose peer never calls fails after it,
// with ncclRemoteError and a message that names the setting.
TEST(Api, TimeoutNamesTheSettingThatBoundsIt) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  const ScopedEnv timeout("PEERREDUCE_TIMEOUT_MS", "300");
  auto comms = makeComms(2);
  ASSERT_FALSE(::testing::Test::HasFailure());
  std::vector<float> data(64, 1.0f);
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comms[0], nullptr),
            ncclRemoteError);
  const std::string message = ncclGetLastError(comms[0]);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10)) << "bounded by the setting";
  EXPECT_TRUE(contains(message, "300 ms (PEERREDUCE_TIMEOUT_MS)")) << message;
  for (ncclComm_t comm : comms) EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
}

TEST(Api, AbortEndsBothCommunicators) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(2);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  real.reset();
  onRanks(2, [&](int rank) { EXPECT_EQ(ncclCommAbort(comms[static_cast<std::size_t>(rank)]), ncclSuccess); });
  EXPECT_EQ(real.callsOf("ncclCommAbort", 0).size(), 1u);
  EXPECT_EQ(real.callsOf("ncclCommAbort", 1).size(), 1u);
  float value = 0;
  EXPECT_EQ(ncclAllReduce(&value, &value, 1, ncclFloat32, ncclSum, comms[0], nullptr), ncclInvalidArgument);
}

// peerreduce's side cannot be made (a link mask that cuts the two ranks apart): with PEERREDUCE_NCCL_TAKE=all
// the NCCL creation fails with the reason and the real communicator is aborted; with auto every call goes
// to the real NCCL instead.
TEST(Api, CreationFailureFailsTakeAllAndForwardsInAuto) {
  const ScopedEnv mask("PEERREDUCE_LINK_MASK", "0-1");
  TestDouble& real = TestDouble::get();
  {
    const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
    real.reset();
    ncclUniqueId id{};
    ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    std::vector<ncclComm_t> comms(2, nullptr);
    std::vector<ncclResult_t> results(2);
    std::vector<std::string> messages(2);
    onRanks(2, [&](int rank) {
      const auto r = static_cast<std::size_t>(rank);
      results[r] = ncclCommInitRank(&comms[r], 2, id, rank);
      messages[r] = ncclGetLastError(nullptr);
    });
    for (std::size_t r = 0; r < 2; ++r) {
      EXPECT_EQ(results[r], ncclInvalidArgument) << messages[r];
      EXPECT_EQ(comms[r], nullptr);
      EXPECT_TRUE(contains(messages[r], "PEERREDUCE_LINK_MASK")) << messages[r];
      EXPECT_TRUE(contains(messages[r], "PEERREDUCE_NCCL_TAKE=all")) << messages[r];
      EXPECT_EQ(real.callsOf("ncclCommAbort", static_cast<int>(r)).size(), 1u);
    }
  }
  {
    const ScopedEnv automatic("PEERREDUCE_NCCL_TAKE", "auto");
    const ScopedEnv summary("PEERREDUCE_NCCL_SUMMARY", "1");
    auto comms = makeComms(2);
    ASSERT_FALSE(::testing::Test::HasFailure());
    real.reset();
    onRanks(2, [&](int rank) {
      float value = 1;
      EXPECT_EQ(ncclAllReduce(&value, &value, 1, ncclFloat32, ncclSum, comms[static_cast<std::size_t>(rank)], nullptr),
                ncclSuccess);
    });
    EXPECT_EQ(real.callsOf("ncclAllReduce").size(), 2u);
    ::testing::internal::CaptureStderr();
    destroyComms(comms);
    const std::string printed = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(contains(printed, "took 0 calls (0 bytes), forwarded 1 call (4 bytes)")) << printed;
    EXPECT_TRUE(contains(printed, "nothing taken: rank 0 could not create peerreduce's communicator")) << printed;
  }
}

// The shadow bootstrap's all-gather is the real NCCL's: its failure fails the creation, on every rank, naming
// the call, and the real communicators are aborted.
TEST(Api, FailureOfTheRealAllGatherUnderTheBootstrapFailsCreation) {
  const ScopedEnv automatic("PEERREDUCE_NCCL_TAKE", "auto");
  TestDouble& real = TestDouble::get();
  real.reset();
  ncclUniqueId id{};
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  real.setResult("ncclAllGather", ncclSystemError);
  std::vector<ncclComm_t> comms(2, nullptr);
  std::vector<ncclResult_t> results(2);
  std::vector<std::string> messages(2);
  onRanks(2, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    results[r] = ncclCommInitRank(&comms[r], 2, id, rank);
    messages[r] = ncclGetLastError(nullptr);
  });
  real.setResult("ncclAllGather", ncclSuccess);
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r], ncclRemoteError) << messages[r];
    EXPECT_EQ(comms[r], nullptr);
    EXPECT_TRUE(contains(messages[r], "ncclAllGather of the bootstrap's record lengths failed with 2")) << messages[r];
    EXPECT_EQ(real.callsOf("ncclCommAbort", static_cast<int>(r)).size(), 1u);
  }
}

// A non-blocking creation is waited for, bounded: one that never finishes is a timeout naming the setting,
// one that fails is the real creation's own result; either way nothing is left behind.
TEST(Api, NonBlockingCreationThatNeverFinishesOrFailsIsReported) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  const ScopedEnv timeout("PEERREDUCE_TIMEOUT_MS", "200");
  const ScopedEnv bootstrap_timeout("PEERREDUCE_BOOTSTRAP_TIMEOUT_MS", "200");
  TestDouble& real = TestDouble::get();
  const auto create = [](ncclComm_t* comm) {
    ncclUniqueId id{};
    EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    return ncclCommInitRankConfig(comm, 1, id, 0, &config);
  };
  real.reset();
  real.setAsyncError(ncclInProgress);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(create(&comm), ncclRemoteError);
  EXPECT_EQ(comm, nullptr);
  EXPECT_TRUE(contains(ncclGetLastError(nullptr), "still being created after 200 ms")) << ncclGetLastError(nullptr);
  EXPECT_EQ(real.callsOf("ncclCommAbort").size(), 1u);

  real.reset();
  real.setAsyncError(ncclSystemError);
  EXPECT_EQ(create(&comm), ncclSystemError);
  EXPECT_EQ(comm, nullptr);
  EXPECT_STREQ(ncclGetLastError(nullptr), kNcclTestDoubleLastError);
  EXPECT_EQ(real.callsOf("ncclCommAbort").size(), 1u);
  real.reset();
}

// A non-blocking communicator's calls may answer ncclInProgress (the operation goes on; the application
// polls ncclCommGetAsyncError): forwarded calls, a group's end and the revoke and finalize of such a
// communicator give it back as it is, and it is no failure (a failure before keeps its message).
TEST(Api, InProgressComesBackAsItIs) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(1);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  float value = 1;
  // A failure of peerreduce's own first (a root outside the world): its message must survive.
  EXPECT_EQ(ncclBroadcast(&value, &value, 1, ncclFloat32, 7, comms[0], nullptr), ncclInvalidArgument);
  const std::string failure = ncclGetLastError(comms[0]);
  for (const char* function : {"ncclReduce", "ncclGroupEnd", "ncclCommFinalize", "ncclCommRevoke"}) {
    real.setResult(function, ncclInProgress);
  }
  EXPECT_EQ(ncclReduce(&value, &value, 1, ncclFloat32, ncclSum, 0, comms[0], nullptr), ncclInProgress);
  EXPECT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclReduce(&value, &value, 1, ncclFloat32, ncclSum, 0, comms[0], nullptr), ncclInProgress);
  EXPECT_EQ(ncclGroupEnd(), ncclInProgress);
  EXPECT_EQ(ncclCommRevoke(comms[0], NCCL_REVOKE_DEFAULT), ncclInProgress);
  EXPECT_EQ(ncclCommFinalize(comms[0]), ncclInProgress);
  EXPECT_EQ(ncclGetLastError(comms[0]), failure) << "ncclInProgress is no failure";
  real.reset();
  destroyComms(comms);
}

}  // namespace
}  // namespace peerreduce::nccl::testing
