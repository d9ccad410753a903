// prCommSplit on the simulator: children by color ordered by key, their collectives over exactly their
// ranks, PR_SPLIT_NOCOLOR ranks, a child of a child, parents and children living independently, and every
// refusal as a typed error on every rank (no rank left waiting out a timeout where it can be told).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "peerreduce/peerreduce_sim.h"
#include "text_contains.h"

namespace {

using peerreduce::testing::contains;

// Runs `body(rank)` on a thread per rank: the split and the simulator's synchronize are collective.
void onEveryRank(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

struct SplitWorld {
  SplitWorld(int n, const prConfig_t* config = nullptr) : comms(static_cast<std::size_t>(n)) {
    EXPECT_EQ(prSimWorldCreate(n, 11, &world), prSuccess) << prGetLastError();
    EXPECT_EQ(prCommInitSimAll(world, config, comms.data()), prSuccess) << prGetLastError();
  }
  ~SplitWorld() {
    for (prComm_t c : comms) {
      if (c != nullptr) prCommDestroy(c);
    }
    prSimWorldDestroy(world);
  }
  prSimWorld_t world = nullptr;
  std::vector<prComm_t> comms;
};

struct Split {
  std::vector<prResult_t> results;
  std::vector<std::string> messages;
  std::vector<prComm_t> comms;
  ~Split() {
    for (prComm_t c : comms) {
      if (c != nullptr) prCommDestroy(c);
    }
  }
};

// Every rank of `parents` splits with its color and key.
void splitEverywhere(const std::vector<prComm_t>& parents, const std::vector<int>& colors, const std::vector<int>& keys,
                     Split& out, const prConfig_t* config = nullptr) {
  const std::size_t n = parents.size();
  out.results.assign(n, prSuccess);
  out.messages.assign(n, "");
  out.comms.assign(n, nullptr);
  onEveryRank(static_cast<int>(n), [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    out.results[i] = prCommSplit(parents[i], colors[i], keys[i], &out.comms[i], config);
    if (out.results[i] != prSuccess) out.messages[i] = prGetLastError();
  });
}

// The parent ranks of `members`' child in child rank order, checked against prCommRank/prCommSize, an
// all-gather of every member's parent rank, and an allreduce over exactly those ranks.
void expectChild(const std::vector<prComm_t>& children, const std::vector<int>& members) {
  const int size = static_cast<int>(members.size());
  constexpr std::size_t kCount = 64;
  std::vector<std::vector<int32_t>> gathered(members.size(), std::vector<int32_t>(members.size(), -1));
  std::vector<std::vector<float>> reduced(members.size(), std::vector<float>(kCount));
  std::vector<prResult_t> results(members.size(), prSuccess);
  onEveryRank(size, [&](int child_rank) {
    const auto i = static_cast<std::size_t>(child_rank);
    const int parent_rank = members[i];
    prComm_t comm = children[static_cast<std::size_t>(parent_rank)];
    int rank = -1;
    int n = -1;
    ASSERT_EQ(prCommRank(comm, &rank), prSuccess);
    ASSERT_EQ(prCommSize(comm, &n), prSuccess);
    EXPECT_EQ(rank, child_rank) << "parent rank " << parent_rank;
    EXPECT_EQ(n, size);
    const int32_t mine = parent_rank;
    for (std::size_t k = 0; k < kCount; ++k) reduced[i][k] = static_cast<float>(parent_rank * 100 + k);
    prResult_t r = prAllGather(&mine, gathered[i].data(), 1, prInt32, comm, nullptr);
    if (r == prSuccess) r = prAllReduce(reduced[i].data(), reduced[i].data(), kCount, prFloat32, prSum, comm, nullptr);
    if (r == prSuccess) r = prCommSynchronize(comm, nullptr);
    results[i] = r;
  });
  float member_sum = 0;
  for (int m : members) member_sum += static_cast<float>(m * 100);
  for (std::size_t i = 0; i < members.size(); ++i) {
    ASSERT_EQ(results[i], prSuccess) << prGetLastError();
    for (std::size_t j = 0; j < members.size(); ++j) EXPECT_EQ(gathered[i][j], members[j]) << "child rank " << i;
    for (std::size_t k = 0; k < kCount; ++k) {
      EXPECT_EQ(reduced[i][k], member_sum + static_cast<float>(size * static_cast<int>(k)));
    }
  }
}

void expectAllreduceOn(const std::vector<prComm_t>& comms) {
  std::vector<int> everyone(comms.size());
  for (std::size_t r = 0; r < comms.size(); ++r) everyone[r] = static_cast<int>(r);
  expectChild(comms, everyone);
}

prConfig_t shortTimeouts(int64_t ms) {
  prConfig_t config{};
  EXPECT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  config.timeout_ms = ms;  // the bootstrap's waits are bounded by the larger of the two
  EXPECT_EQ(prConfigSet(&config, "PEERREDUCE_BOOTSTRAP_TIMEOUT_MS", std::to_string(ms).c_str()), prSuccess)
      << prGetLastError();
  return config;
}

// Splits a world of colors.size() ranks and checks each child of `children` (its parent ranks in child rank
// order); the ranks in none get NULL.
void expectSplit(const std::vector<int>& colors, const std::vector<int>& keys,
                 const std::vector<std::vector<int>>& children) {
  SplitWorld parent(static_cast<int>(colors.size()));
  Split split;
  splitEverywhere(parent.comms, colors, keys, split);
  for (std::size_t r = 0; r < colors.size(); ++r) {
    ASSERT_EQ(split.results[r], prSuccess) << split.messages[r];
    EXPECT_EQ(split.comms[r] == nullptr, colors[r] == PR_SPLIT_NOCOLOR) << "rank " << r;
  }
  for (const std::vector<int>& members : children) expectChild(split.comms, members);
}

TEST(CApiSplit, HalvesEachReduceAndGatherOverTheirOwnRanks) {
  expectSplit({0, 0, 0, 1, 1, 1}, {0, 1, 2, 3, 4, 5}, {{0, 1, 2}, {3, 4, 5}});
}

TEST(CApiSplit, OddAndEvenRanksWithReversedKeysAreRankedBackwards) {
  expectSplit({0, 1, 0, 1, 0, 1}, {0, -1, -2, -3, -4, -5}, {{4, 2, 0}, {5, 3, 1}});
}

TEST(CApiSplit, EqualKeysKeepTheParentsOrder) { expectSplit({3, 3, 3, 3}, {7, 1, 7, 1}, {{1, 3, 0, 2}}); }

TEST(CApiSplit, NoColorRanksGetNoCommunicatorAndTheOthersGoOn) {
  expectSplit({PR_SPLIT_NOCOLOR, 2, 2, PR_SPLIT_NOCOLOR, 2}, {0, 0, 0, 0, 0}, {{1, 2, 4}});
}

TEST(CApiSplit, ChildrenOfDifferentSizesAndASingleRankChild) {
  expectSplit({0, 1, 1, 1, 1}, {0, 0, 0, 0, 0}, {{0}, {1, 2, 3, 4}});
}

TEST(CApiSplit, AChildOfAChildWorks) {
  SplitWorld parent(8);
  Split halves;
  splitEverywhere(parent.comms, {0, 0, 0, 0, 1, 1, 1, 1}, {0, 1, 2, 3, 0, 1, 2, 3}, halves);
  for (std::size_t r = 0; r < 8; ++r) ASSERT_EQ(halves.results[r], prSuccess) << halves.messages[r];
  // Within each half (child ranks 0..3), pairs {0,1} and {2,3}, the pair's order reversed by key.
  std::vector<int> colors(8);
  std::vector<int> keys(8);
  for (int r = 0; r < 8; ++r) {
    colors[static_cast<std::size_t>(r)] = (r % 4) / 2;
    keys[static_cast<std::size_t>(r)] = -(r % 2);
  }
  Split quarters;
  quarters.results.assign(8, prSuccess);
  quarters.messages.assign(8, "");
  quarters.comms.assign(8, nullptr);
  onEveryRank(8, [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    quarters.results[i] = prCommSplit(halves.comms[i], colors[i], keys[i], &quarters.comms[i], nullptr);
    if (quarters.results[i] != prSuccess) quarters.messages[i] = prGetLastError();
  });
  for (std::size_t r = 0; r < 8; ++r) ASSERT_EQ(quarters.results[r], prSuccess) << quarters.messages[r];
  expectChild(quarters.comms, {1, 0});
  expectChild(quarters.comms, {3, 2});
  expectChild(quarters.comms, {5, 4});
  expectChild(quarters.comms, {7, 6});
  expectChild(halves.comms, {0, 1, 2, 3});
}

TEST(CApiSplit, DestroyingTheChildrenLeavesTheParentUsable) {
  SplitWorld parent(4);
  {
    Split split;
    splitEverywhere(parent.comms, {0, 0, 1, 1}, {0, 1, 0, 1}, split);
    for (std::size_t r = 0; r < 4; ++r) ASSERT_EQ(split.results[r], prSuccess) << split.messages[r];
    expectChild(split.comms, {0, 1});
  }  // the children are destroyed here
  expectAllreduceOn(parent.comms);
  Split again;
  splitEverywhere(parent.comms, {0, 1, 0, 1}, {0, 0, 0, 0}, again);
  for (std::size_t r = 0; r < 4; ++r) ASSERT_EQ(again.results[r], prSuccess) << again.messages[r];
  expectChild(again.comms, {1, 3});
}

TEST(CApiSplit, ChildrenOutliveTheirParentAndRegisterBuffersOnTheirOwnBootstrap) {
  Split split;
  {
    SplitWorld parent(4);
    splitEverywhere(parent.comms, {0, 0, 1, 1}, {0, 1, 0, 1}, split);
    for (std::size_t r = 0; r < 4; ++r) ASSERT_EQ(split.results[r], prSuccess) << split.messages[r];
  }  // the parent and its world are destroyed here
  expectChild(split.comms, {2, 3});
  std::vector<std::vector<float>> buffers(4, std::vector<float>(256));
  std::vector<prResult_t> results(4, prSuccess);
  onEveryRank(2, [&](int i) {
    const auto r = static_cast<std::size_t>(i + 2);
    prRegisteredBuffer_t buffer = nullptr;
    results[r] = prCommRegisterBuffer(split.comms[r], buffers[r].data(), 256 * sizeof(float), &buffer);
    if (results[r] == prSuccess) results[r] = prCommDeregisterBuffer(split.comms[r], buffer);
  });
  EXPECT_EQ(results[2], prSuccess) << prGetLastError();
  EXPECT_EQ(results[3], prSuccess);
}

TEST(CApiSplit, ANullOrDestroyedParentIsRefused) {
  prComm_t child = reinterpret_cast<prComm_t>(0x1);
  EXPECT_EQ(prCommSplit(nullptr, 0, 0, &child, nullptr), prInvalidArgument);
  EXPECT_EQ(child, nullptr);
  EXPECT_TRUE(contains(prGetLastError(), "comm is NULL")) << prGetLastError();

  prComm_t dead = nullptr;
  {
    SplitWorld parent(1);
    dead = parent.comms[0];
  }
  child = reinterpret_cast<prComm_t>(0x1);
  EXPECT_EQ(prCommSplit(dead, 0, 0, &child, nullptr), prInvalidArgument);
  EXPECT_EQ(child, nullptr);
  EXPECT_TRUE(contains(prGetLastError(), "not a live handle")) << prGetLastError();
}

TEST(CApiSplit, AnAbortedParentIsRefused) {
  SplitWorld parent(2);
  for (prComm_t c : parent.comms) ASSERT_EQ(prCommAbort(c), prSuccess);
  Split split;
  splitEverywhere(parent.comms, {0, 0}, {0, 1}, split);
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(split.results[r], prAborted);
    EXPECT_EQ(split.comms[r], nullptr);
    EXPECT_TRUE(contains(split.messages[r], "aborted")) << split.messages[r];
  }
}

TEST(CApiSplit, ANegativeColorIsRefusedAndTheOtherRanksAreTold) {
  SplitWorld parent(3);
  Split split;
  splitEverywhere(parent.comms, {0, -5, 0}, {0, 0, 0}, split);
  EXPECT_EQ(split.results[1], prInvalidArgument);
  EXPECT_TRUE(contains(split.messages[1], "color -5")) << split.messages[1];
  for (std::size_t r : {0u, 2u}) {
    EXPECT_EQ(split.results[r], prRemoteError);
    EXPECT_TRUE(contains(split.messages[r], "rank 1 refused")) << split.messages[r];
  }
  for (prComm_t c : split.comms) EXPECT_EQ(c, nullptr);
  expectAllreduceOn(parent.comms);  // nothing changed
}

TEST(CApiSplit, ANullNewcommIsRefusedAndTheOtherRanksAreTold) {
  SplitWorld parent(2);
  std::vector<prResult_t> results(2);
  std::vector<std::string> messages(2);
  prComm_t child = nullptr;
  onEveryRank(2, [&](int r) {
    results[static_cast<std::size_t>(r)] =
        prCommSplit(parent.comms[static_cast<std::size_t>(r)], 0, 0, r == 0 ? nullptr : &child, nullptr);
    messages[static_cast<std::size_t>(r)] = prGetLastError();
  });
  EXPECT_EQ(results[0], prInvalidArgument);
  EXPECT_TRUE(contains(messages[0], "newcomm is NULL")) << messages[0];
  EXPECT_EQ(results[1], prRemoteError);
  EXPECT_TRUE(contains(messages[1], "rank 0 refused")) << messages[1];
  EXPECT_EQ(child, nullptr);
}

TEST(CApiSplit, ABadConfigIsRefusedAndTheOtherRanksAreTold) {
  SplitWorld parent(2);
  prConfig_t bad{};
  ASSERT_EQ(prConfigInit(&bad), prSuccess);
  bad.scratch_bytes = 1;  // below the 64 KiB the setting accepts
  std::vector<prResult_t> results(2);
  std::vector<std::string> messages(2);
  std::vector<prComm_t> children(2, nullptr);
  onEveryRank(2, [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    results[i] = prCommSplit(parent.comms[i], 0, 0, &children[i], r == 1 ? &bad : nullptr);
    messages[i] = prGetLastError();
  });
  EXPECT_EQ(results[1], prInvalidArgument) << messages[1];
  EXPECT_EQ(results[0], prRemoteError) << messages[0];
  EXPECT_TRUE(contains(messages[0], "rank 1 refused")) << messages[0];
  for (prComm_t c : children) EXPECT_EQ(c, nullptr);
}

TEST(CApiSplit, RanksOfOneChildWithDifferentSettingsAreAMismatchAndOtherChildrenAreMade) {
  SplitWorld parent(4);
  prConfig_t other{};
  ASSERT_EQ(prConfigInit(&other), prSuccess);
  ASSERT_EQ(prConfigSet(&other, "PEERREDUCE_ALGO", "ring"), prSuccess) << prGetLastError();
  std::vector<prResult_t> results(4);
  std::vector<std::string> messages(4);
  Split split;
  split.comms.assign(4, nullptr);
  onEveryRank(4, [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    // Child 0 (ranks 0, 1) disagrees; child 1 (ranks 2, 3) agrees.
    results[i] = prCommSplit(parent.comms[i], r / 2, 0, &split.comms[i], r == 1 ? &other : nullptr);
    messages[i] = prGetLastError();
  });
  EXPECT_EQ(results[0], prMismatch) << messages[0];
  EXPECT_EQ(results[1], prMismatch) << messages[1];
  EXPECT_EQ(split.comms[0], nullptr);
  EXPECT_EQ(split.comms[1], nullptr);
  ASSERT_EQ(results[2], prSuccess) << messages[2];
  ASSERT_EQ(results[3], prSuccess) << messages[3];
  expectChild(split.comms, {2, 3});
}

TEST(CApiSplit, ARankThatNeverCallsIsATimeoutNamingIt) {
  const prConfig_t config = shortTimeouts(300);
  SplitWorld parent(3, &config);
  std::vector<prResult_t> results(3, prSuccess);
  std::vector<std::string> messages(3);
  std::vector<prComm_t> children(3, nullptr);
  onEveryRank(2, [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    results[i] = prCommSplit(parent.comms[i], 0, 0, &children[i], nullptr);
    messages[i] = prGetLastError();
  });
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r], prTimeout) << messages[r];
    EXPECT_TRUE(contains(messages[r], "ranks 2 ")) << messages[r];
    EXPECT_EQ(children[r], nullptr);
  }
}

}  // namespace
