// prCommInitRank with every kind of bootstrap, on the simulator: a simulated world's own, and the
// application's callbacks attached to a world. Bad bootstraps (a failing callback, a wrong record size,
// a callback that never returns, ranks with different world sizes) give typed errors on every rank and
// leave no communicator behind.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "peerreduce/peerreduce_sim.h"
#include "text_contains.h"

namespace {

using peerreduce::testing::contains;

// The application's rendezvous: an in-process group of the C++ API, driven through C callbacks.
struct Rendezvous {
  explicit Rendezvous(int n) : group(peerreduce::createInProcessGroup(n).value()) {}
  std::vector<std::shared_ptr<peerreduce::Bootstrap>> group;
  // How rank `misbehaving` misbehaves: 0 not at all, 1 fail, 2 short size, 3 never return.
  int misbehaving = -1;
  int how = 0;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
};

struct Slot {
  Rendezvous* app;
  int rank;
};

int allGather(void* context, const void* send, void* recv, size_t bytes, size_t* gathered, int64_t timeout_ms) {
  auto* slot = static_cast<Slot*>(context);
  Rendezvous& app = *slot->app;
  if (slot->rank == app.misbehaving && app.how == 1) return 42;
  if (slot->rank == app.misbehaving && app.how == 3) {
    // A copy of the future keeps its state alive: the test may tear the rendezvous down while this
    // abandoned callback thread is still waking up from the release.
    const std::shared_future<void> released = app.released;
    released.wait();
    return 0;
  }
  const std::size_t n = app.group.size();
  const peerreduce::Status s = app.group[static_cast<std::size_t>(slot->rank)]->allGather(
      std::span<const std::byte>(static_cast<const std::byte*>(send), bytes),
      std::span<std::byte>(static_cast<std::byte*>(recv), bytes * n), std::chrono::milliseconds(timeout_ms));
  if (!s.isOk()) return 1;
  *gathered = bytes * n - (slot->rank == app.misbehaving && app.how == 2 ? 8 : 0);
  return 0;
}

prConfig_t shortTimeout(int64_t ms) {
  prConfig_t config{};
  EXPECT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  config.timeout_ms = ms;
  // Bootstrap waits have a floor of their own (PEERREDUCE_BOOTSTRAP_TIMEOUT_MS); lowered so that a rank
  // left waiting by a misbehaving one gives up as quickly as the test wants.
  EXPECT_EQ(prConfigSet(&config, "PEERREDUCE_BOOTSTRAP_TIMEOUT_MS", std::to_string(ms).c_str()), prSuccess)
      << prGetLastError();
  return config;
}

struct Outcome {
  std::vector<prResult_t> results;
  std::vector<std::string> messages;
  std::vector<prComm_t> comms;
};

// Every rank's thread creates its communicator with prCommInitRank over `bootstraps`.
Outcome initEverywhere(const std::vector<prBootstrap_t>& bootstraps, int nranks, const prConfig_t* config) {
  const std::size_t n = bootstraps.size();
  Outcome out{std::vector<prResult_t>(n), std::vector<std::string>(n), std::vector<prComm_t>(n)};
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      out.results[r] = prCommInitRank(&out.comms[r], nranks, static_cast<int>(r), bootstraps[r], config);
      out.messages[r] = out.results[r] == prSuccess ? "" : prGetLastError();
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

// Reduces in place on every communicator and checks every rank's result.
void expectAllreduceWorks(const std::vector<prComm_t>& comms) {
  const int n = static_cast<int>(comms.size());
  std::vector<std::vector<float>> data(comms.size(), std::vector<float>(100));
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < 100; ++i) data[r][i] = static_cast<float>(r + i);
  }
  std::vector<std::thread> threads;
  std::vector<prResult_t> results(comms.size());
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      results[r] = prAllReduce(data[r].data(), data[r].data(), 100, prFloat32, prSum, comms[r], nullptr);
      if (results[r] == prSuccess) results[r] = prCommSynchronize(comms[r], nullptr);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(results[r], prSuccess) << prGetLastError();
    for (int i = 0; i < 100; ++i) EXPECT_EQ(data[r][i], static_cast<float>(n * i + n * (n - 1) / 2));
  }
}

TEST(CApiInitRank, ASimulatedWorldsBootstrapMakesCommunicatorsOnTheWorld) {
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(4, 5, &world), prSuccess) << prGetLastError();
  std::vector<prBootstrap_t> bootstraps(4);
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(prSimWorldBootstrap(world, r, &bootstraps[r]), prSuccess) << prGetLastError();
  }
  const Outcome made = initEverywhere(bootstraps, 4, nullptr);
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(made.results[r], prSuccess) << made.messages[r];
  }
  for (prBootstrap_t b : bootstraps) EXPECT_EQ(prBootstrapDestroy(b), prSuccess);  // comms keep what they need
  expectAllreduceWorks(made.comms);
  for (prComm_t c : made.comms) EXPECT_EQ(prCommDestroy(c), prSuccess);
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess);
}

class CApiCallbackBootstrap : public ::testing::Test {
 protected:
  void make(int n) {
    app = std::make_unique<Rendezvous>(n);
    ASSERT_EQ(prSimWorldCreate(n, 9, &world), prSuccess) << prGetLastError();
    slots.resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      slots[r] = Slot{app.get(), r};
      const prBootstrapCallbacks_t callbacks{allGather, nullptr, &slots[r], "test rendezvous"};
      prBootstrap_t b = nullptr;
      ASSERT_EQ(prBootstrapCreate(n, r, &callbacks, &b), prSuccess) << prGetLastError();
      ASSERT_EQ(prSimWorldAttachBootstrap(world, b), prSuccess) << prGetLastError();
      bootstraps.push_back(b);
    }
  }
  void TearDown() override {
    for (prBootstrap_t b : bootstraps) EXPECT_EQ(prBootstrapDestroy(b), prSuccess);
    if (world != nullptr) {
      EXPECT_EQ(prSimWorldDestroy(world), prSuccess);
    }
  }
  // Every rank failed with a typed error and left no communicator.
  static void expectNothingCreated(const Outcome& out) {
    for (std::size_t r = 0; r < out.results.size(); ++r) {
      EXPECT_NE(out.results[r], prSuccess) << "rank " << r;
      EXPECT_EQ(out.comms[r], nullptr) << "rank " << r;
    }
  }
  std::unique_ptr<Rendezvous> app;
  prSimWorld_t world = nullptr;
  std::vector<Slot> slots;
  std::vector<prBootstrap_t> bootstraps;
};

TEST_F(CApiCallbackBootstrap, TheApplicationsRendezvousCarriesCreation) {
  make(3);
  const Outcome made = initEverywhere(bootstraps, 3, nullptr);
  for (int r = 0; r < 3; ++r) {
    ASSERT_EQ(made.results[r], prSuccess) << made.messages[r];
  }
  expectAllreduceWorks(made.comms);
  for (prComm_t c : made.comms) EXPECT_EQ(prCommDestroy(c), prSuccess);
}

TEST_F(CApiCallbackBootstrap, AFailingCallbackIsATypedErrorNamingRankAndCallback) {
  make(3);
  app->misbehaving = 2;
  app->how = 1;
  const prConfig_t config = shortTimeout(500);
  const Outcome out = initEverywhere(bootstraps, 3, &config);
  expectNothingCreated(out);
  EXPECT_EQ(out.results[2], prUnavailable) << out.messages[2];
  EXPECT_TRUE(contains(out.messages[2].c_str(), "rank 2 (test rendezvous)")) << out.messages[2];
  EXPECT_TRUE(contains(out.messages[2].c_str(), "all_gather callback failed with code 42")) << out.messages[2];
}

TEST_F(CApiCallbackBootstrap, AWrongRecordSizeIsCorrupt) {
  make(2);
  app->misbehaving = 1;
  app->how = 2;
  const prConfig_t config = shortTimeout(500);
  const Outcome out = initEverywhere(bootstraps, 2, &config);
  expectNothingCreated(out);
  EXPECT_EQ(out.results[1], prCorrupt) << out.messages[1];
  EXPECT_TRUE(contains(out.messages[1].c_str(), "rank 1 (test rendezvous)")) << out.messages[1];
  EXPECT_TRUE(contains(out.messages[1].c_str(), "delivered")) << out.messages[1];
}

TEST_F(CApiCallbackBootstrap, ACallbackThatNeverReturnsIsATimeoutBoundedByTheConfiguredTimeout) {
  make(2);
  app->misbehaving = 0;
  app->how = 3;
  const prConfig_t config = shortTimeout(200);
  const auto started = std::chrono::steady_clock::now();
  const Outcome out = initEverywhere(bootstraps, 2, &config);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10)) << "creation is bounded";
  expectNothingCreated(out);
  EXPECT_EQ(out.results[0], prTimeout) << out.messages[0];
  EXPECT_TRUE(contains(out.messages[0].c_str(), "all_gather callback did not return within 200 ms")) << out.messages[0];
  EXPECT_TRUE(contains(out.messages[0].c_str(), "rank 0")) << out.messages[0];
  app->release.set_value();
}

TEST_F(CApiCallbackBootstrap, MismatchedWorldSizesAreRefusedByName) {
  make(2);
  // A rank that passes another nranks than its bootstrap was made for is refused before any collective.
  prComm_t comm = reinterpret_cast<prComm_t>(this);
  EXPECT_EQ(prCommInitRank(&comm, 3, 1, bootstraps[1], nullptr), prInvalidArgument);
  EXPECT_EQ(comm, nullptr);
  EXPECT_TRUE(contains(prGetLastError(), "rank 1 of 3 was given the bootstrap of rank 1 of 2")) << prGetLastError();
  // A bootstrap whose world size is not the simulated world's cannot be attached to it.
  const prBootstrapCallbacks_t callbacks{allGather, nullptr, &slots[0], "test rendezvous"};
  prBootstrap_t three = nullptr;
  ASSERT_EQ(prBootstrapCreate(3, 0, &callbacks, &three), prSuccess) << prGetLastError();
  EXPECT_EQ(prSimWorldAttachBootstrap(world, three), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "a bootstrap of 3 ranks on a simulated world of 2")) << prGetLastError();
  EXPECT_EQ(prBootstrapDestroy(three), prSuccess);
}

TEST(CApiInitRank, BadArgumentsAreRefusedByNameAndLeaveNothing) {
  prComm_t comm = nullptr;
  EXPECT_EQ(prCommInitRank(nullptr, 1, 0, nullptr, nullptr), prInvalidArgument);
  EXPECT_EQ(prCommInitRank(&comm, 1, 0, nullptr, nullptr), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "bootstrap is NULL")) << prGetLastError();
  int dummy = 0;
  EXPECT_EQ(prCommInitRank(&comm, 1, 0, reinterpret_cast<prBootstrap_t>(&dummy), nullptr), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "not a live handle")) << prGetLastError();
  EXPECT_EQ(comm, nullptr);
  prBootstrap_t b = nullptr;
  EXPECT_EQ(prBootstrapCreate(2, 0, nullptr, &b), prInvalidArgument);
  const prBootstrapCallbacks_t missing{nullptr, nullptr, nullptr, nullptr};
  EXPECT_EQ(prBootstrapCreate(2, 0, &missing, &b), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "all_gather callback is missing")) << prGetLastError();
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(prBootstrapDestroy(reinterpret_cast<prBootstrap_t>(&dummy)), prInvalidArgument);
}

// prCommInitAll's arguments: each refused with a typed error naming it, and no communicator.
TEST(CApiInitAll, BadArgumentsAreTypedErrorsNamingThem) {
  prComm_t comms[3] = {reinterpret_cast<prComm_t>(1), reinterpret_cast<prComm_t>(1), reinterpret_cast<prComm_t>(1)};
  EXPECT_EQ(prCommInitAll(nullptr, 2, nullptr, nullptr), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "comms")) << prGetLastError();
  EXPECT_EQ(prCommInitAll(comms, 0, nullptr, nullptr), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "ndev is 0")) << prGetLastError();
  EXPECT_EQ(prCommInitAll(comms, 65, nullptr, nullptr), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "ndev is 65")) << prGetLastError();
  const int twice[3] = {1, 0, 1};
  EXPECT_EQ(prCommInitAll(comms, 3, twice, nullptr), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "device 1 twice (entries 0 and 2)")) << prGetLastError();
  for (prComm_t c : comms) EXPECT_EQ(c, nullptr) << "nothing is left half-made";
  const int negative[2] = {0, -3};
  EXPECT_EQ(prCommInitAll(comms, 2, negative, nullptr), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "devlist[1] is -3")) << prGetLastError();
}

// Without a GPU (this build or machine), every rank fails alike: the call says why, and no communicator is
// returned (all or nothing), whatever the world size.
TEST(CApiInitAll, WithoutAGpuNoRankIsMadeAndTheErrorSaysWhy) {
  for (int ndev : {1, 3}) {
    prComm_t comms[3] = {nullptr, nullptr, nullptr};
    const prResult_t result = prCommInitAll(comms, ndev, nullptr, nullptr);
    EXPECT_TRUE(result == prUnsupported || result == prUnavailable) << ndev << ": " << prGetLastError();
    EXPECT_TRUE(contains(prGetLastError(), "prCommInitAll")) << prGetLastError();
    for (prComm_t c : comms) EXPECT_EQ(c, nullptr);
  }
}

TEST(CApiInitRank, WithoutASimulatedWorldTheCommunicatorGoesToAGpuAndSaysWhyItCannot) {
  // A one-rank world through callbacks and no simulated world: the communicator's place is a GPU. This
  // build or machine has none, so creation fails with a typed error and no communicator.
  Rendezvous app(1);
  Slot slot{&app, 0};
  const prBootstrapCallbacks_t callbacks{allGather, nullptr, &slot, "test rendezvous"};
  prBootstrap_t b = nullptr;
  ASSERT_EQ(prBootstrapCreate(1, 0, &callbacks, &b), prSuccess) << prGetLastError();
  prComm_t comm = nullptr;
  const prResult_t result = prCommInitRank(&comm, 1, 0, b, nullptr);
  EXPECT_TRUE(result == prUnsupported || result == prUnavailable) << prGetLastError();
#if !defined(PEERREDUCE_GPU_CUDA) && !defined(PEERREDUCE_GPU_HIP)
  // A build without GPUs (the "release" preset installed on a GPU machine) names the build that has them.
  EXPECT_EQ(result, prUnsupported);
  EXPECT_TRUE(contains(prGetLastError(), "no GPU backend")) << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), "--preset release-cuda")) << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), "-DPEERREDUCE_GPU=cuda")) << prGetLastError();
#endif
  EXPECT_EQ(comm, nullptr);
  EXPECT_EQ(prBootstrapDestroy(b), prSuccess);
}

}  // namespace
