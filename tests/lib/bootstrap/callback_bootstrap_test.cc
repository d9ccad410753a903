// The callback bootstrap (the application's own rendezvous): blocks arrive framed and checked, and every
// way a callback can misbehave (fail, deliver the wrong size, reorder blocks, come from a rank of another
// world size or another collective, never return) is a typed error naming the rank and the callback.
#include "bootstrap/callback_bootstrap.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

using std::chrono::milliseconds;

using peerreduce::testing::contains;

// The application's rendezvous in these tests: an in-process group (any correct all-gather would do).
struct AppRendezvous {
  explicit AppRendezvous(int n) : group(createInProcessGroup(n).value()) {}
  std::vector<std::shared_ptr<Bootstrap>> group;

  int gather(int rank, const void* send, void* recv, std::size_t bytes, std::size_t* gathered, std::int64_t timeout) {
    const auto n = group.size();
    const Status s = group[static_cast<std::size_t>(rank)]->allGather(
        std::span<const std::byte>(static_cast<const std::byte*>(send), bytes),
        std::span<std::byte>(static_cast<std::byte*>(recv), bytes * n), milliseconds(timeout));
    *gathered = s.isOk() ? bytes * n : 0;
    return s.isOk() ? 0 : 1;
  }
};

// A callback wrapper that lets one rank misbehave: `edit` runs after the real gather.
using Edit = std::function<int(int rank, void* recv, std::size_t bytes, std::size_t* gathered)>;

std::vector<std::shared_ptr<Bootstrap>> makeGroup(AppRendezvous& app, int n, const Edit& edit = nullptr,
                                                  const std::vector<int>& sizes = {}) {
  std::vector<std::shared_ptr<Bootstrap>> made;
  for (int r = 0; r < n; ++r) {
    BootstrapCallbacks callbacks;
    callbacks.name = "test rendezvous";
    callbacks.all_gather = [&app, r, edit](const void* send, void* recv, std::size_t bytes, std::size_t* gathered,
                                           std::int64_t timeout) {
      const int result = app.gather(r, send, recv, bytes, gathered, timeout);
      return edit && result == 0 ? edit(r, recv, bytes, gathered) : result;
    };
    const int size = sizes.empty() ? n : sizes[static_cast<std::size_t>(r)];
    made.push_back(createCallbackBootstrap(r, size, callbacks).value());
  }
  return made;
}

// Runs one allGather of a 4-byte block (its rank) on every rank's thread; returns each rank's status.
std::vector<Status> gatherEverywhere(std::vector<std::shared_ptr<Bootstrap>>& group, milliseconds timeout,
                                     std::vector<std::vector<int>>* results = nullptr) {
  const std::size_t n = group.size();
  std::vector<Status> statuses(n);
  std::vector<std::vector<int>> seen(n, std::vector<int>(n, -1));
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      const int mine = static_cast<int>(r) * 10;
      statuses[r] =
          group[r]->allGather(std::span<const std::byte>(reinterpret_cast<const std::byte*>(&mine), 4),
                              std::span<std::byte>(reinterpret_cast<std::byte*>(seen[r].data()), 4 * n), timeout);
    });
  }
  for (auto& t : threads) t.join();
  if (results) *results = seen;
  return statuses;
}

TEST(CallbackBootstrap, GathersEveryRanksBlockInRankOrderAndBarriers) {
  AppRendezvous app(4);
  auto group = makeGroup(app, 4);
  std::vector<std::vector<int>> seen;
  for (const Status& s : gatherEverywhere(group, milliseconds(5000), &seen)) ASSERT_TRUE(s.isOk()) << s.toString();
  for (const auto& row : seen) EXPECT_EQ(row, (std::vector<int>{0, 10, 20, 30}));
  // A second collective works (sequence numbers advance together), and so does the default barrier.
  for (const Status& s : gatherEverywhere(group, milliseconds(5000))) ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<std::thread> threads;
  std::vector<Status> barrier(4);
  for (int r = 0; r < 4; ++r) threads.emplace_back([&, r] { barrier[r] = group[r]->barrier(milliseconds(5000)); });
  for (auto& t : threads) t.join();
  for (const Status& s : barrier) EXPECT_TRUE(s.isOk()) << s.toString();
}

TEST(CallbackBootstrap, AFailingCallbackIsUnavailableNamingRankCallbackAndCode) {
  AppRendezvous app(2);
  auto group = makeGroup(app, 2, [](int rank, void*, std::size_t, std::size_t*) { return rank == 1 ? 7 : 0; });
  const auto statuses = gatherEverywhere(group, milliseconds(5000));
  EXPECT_TRUE(statuses[0].isOk()) << statuses[0].toString();
  EXPECT_EQ(statuses[1].code(), ErrorCode::kUnavailable) << statuses[1].toString();
  EXPECT_TRUE(contains(statuses[1].message(), "rank 1 (test rendezvous)")) << statuses[1].message();
  EXPECT_TRUE(contains(statuses[1].message(), "all_gather callback failed with code 7")) << statuses[1].message();
}

TEST(CallbackBootstrap, AWrongGatheredSizeIsCorruptNamingTheSizes) {
  AppRendezvous app(2);
  auto group = makeGroup(app, 2, [](int rank, void*, std::size_t, std::size_t* gathered) {
    if (rank == 0) *gathered -= 1;
    return 0;
  });
  const auto statuses = gatherEverywhere(group, milliseconds(5000));
  EXPECT_EQ(statuses[0].code(), ErrorCode::kCorrupt) << statuses[0].toString();
  EXPECT_TRUE(contains(statuses[0].message(), "delivered")) << statuses[0].message();
  EXPECT_TRUE(contains(statuses[0].message(), "expected")) << statuses[0].message();
  EXPECT_TRUE(statuses[1].isOk());
}

TEST(CallbackBootstrap, BlocksOutOfOrderOrOverwrittenAreCorrupt) {
  AppRendezvous app(2);
  auto swapped = makeGroup(app, 2, [](int rank, void* recv, std::size_t bytes, std::size_t*) {
    if (rank == 0) {
      std::vector<std::byte> first(bytes);
      auto* base = static_cast<std::byte*>(recv);
      std::memcpy(first.data(), base, bytes);
      std::memcpy(base, base + bytes, bytes);
      std::memcpy(base + bytes, first.data(), bytes);
    }
    return 0;
  });
  auto statuses = gatherEverywhere(swapped, milliseconds(5000));
  EXPECT_EQ(statuses[0].code(), ErrorCode::kCorrupt) << statuses[0].toString();
  EXPECT_TRUE(contains(statuses[0].message(), "holds rank 1's block")) << statuses[0].message();

  AppRendezvous app2(2);
  auto zeroed = makeGroup(app2, 2, [](int rank, void* recv, std::size_t bytes, std::size_t*) {
    if (rank == 1) std::memset(static_cast<std::byte*>(recv) + bytes, 0, bytes);
    return 0;
  });
  statuses = gatherEverywhere(zeroed, milliseconds(5000));
  EXPECT_EQ(statuses[1].code(), ErrorCode::kCorrupt) << statuses[1].toString();
  EXPECT_TRUE(contains(statuses[1].message(), "block 1 of the all_gather callback is not a peerreduce frame"))
      << statuses[1].message();
}

TEST(CallbackBootstrap, RanksOfDifferentWorldSizesAreAMismatch) {
  // Rank 1 believes the world has 3 ranks; the application's rendezvous still gathers 2 blocks. Rank 1's
  // output then does not match the gathered size, and rank 0 sees a block of a 3-rank world.
  AppRendezvous app(2);
  auto group = makeGroup(app, 2, nullptr, {2, 3});
  std::vector<Status> statuses(2);
  std::thread t0([&] {
    int mine = 0;
    std::vector<int> all(2);
    statuses[0] =
        group[0]->allGather(std::span<const std::byte>(reinterpret_cast<const std::byte*>(&mine), 4),
                            std::span<std::byte>(reinterpret_cast<std::byte*>(all.data()), 8), milliseconds(5000));
  });
  std::thread t1([&] {
    int mine = 1;
    std::vector<int> all(3);
    statuses[1] =
        group[1]->allGather(std::span<const std::byte>(reinterpret_cast<const std::byte*>(&mine), 4),
                            std::span<std::byte>(reinterpret_cast<std::byte*>(all.data()), 12), milliseconds(5000));
  });
  t0.join();
  t1.join();
  EXPECT_EQ(statuses[0].code(), ErrorCode::kMismatch) << statuses[0].toString();
  EXPECT_TRUE(contains(statuses[0].message(), "world of 3 ranks")) << statuses[0].message();
  EXPECT_TRUE(contains(statuses[0].message(), "every rank must pass the same nranks")) << statuses[0].message();
  EXPECT_FALSE(statuses[1].isOk());
}

TEST(CallbackBootstrap, RanksAtDifferentCollectivesAreAMismatch) {
  AppRendezvous app(2);
  auto group = makeGroup(app, 2);
  // Rank 0's bootstrap makes one collective that rank 1 joins through the application directly (not
  // through its bootstrap): rank 1's bootstrap stays at collective 0 while rank 0's moves to 1.
  std::vector<Status> first(2);
  std::thread a([&] {
    int mine = 0;
    std::vector<int> all(2);
    first[0] =
        group[0]->allGather(std::span<const std::byte>(reinterpret_cast<const std::byte*>(&mine), 4),
                            std::span<std::byte>(reinterpret_cast<std::byte*>(all.data()), 8), milliseconds(5000));
  });
  std::thread b([&] {
    std::vector<std::byte> send(sizeof(CallbackFrameHeader) + 4), recv(2 * send.size());
    CallbackFrameHeader header{kCallbackFrameMagic, 1, 2, 4, 0};
    std::memcpy(send.data(), &header, sizeof(header));
    std::size_t gathered = 0;
    (void)app.gather(1, send.data(), recv.data(), send.size(), &gathered, 5000);
  });
  a.join();
  b.join();
  ASSERT_TRUE(first[0].isOk()) << first[0].toString();
  const auto statuses = gatherEverywhere(group, milliseconds(5000));
  EXPECT_EQ(statuses[0].code(), ErrorCode::kMismatch) << statuses[0].toString();
  EXPECT_TRUE(contains(statuses[0].message(), "ranks called different collectives")) << statuses[0].message();
  EXPECT_EQ(statuses[1].code(), ErrorCode::kMismatch) << statuses[1].toString();
}

TEST(CallbackBootstrap, ACallbackThatNeverReturnsTimesOutAndBreaksTheBootstrap) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls{0};
  BootstrapCallbacks callbacks;
  callbacks.name = "stuck rendezvous";
  callbacks.all_gather = [released, &calls](const void*, void*, std::size_t, std::size_t*, std::int64_t) {
    ++calls;
    released.wait();  // ignores its timeout
    return 0;
  };
  auto bootstrap = createCallbackBootstrap(0, 2, callbacks).value();
  int mine = 0;
  std::vector<int> all(2);
  const auto started = std::chrono::steady_clock::now();
  const Status s =
      bootstrap->allGather(std::span<const std::byte>(reinterpret_cast<const std::byte*>(&mine), 4),
                           std::span<std::byte>(reinterpret_cast<std::byte*>(all.data()), 8), milliseconds(100));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5)) << "the wait is bounded";
  EXPECT_EQ(s.code(), ErrorCode::kTimeout) << s.toString();
  EXPECT_TRUE(contains(s.message(), "rank 0 (stuck rendezvous)")) << s.message();
  EXPECT_TRUE(contains(s.message(), "all_gather callback did not return within 100 ms")) << s.message();
  // Broken: the next call refuses at once without calling the application again.
  const Status again = bootstrap->barrier(milliseconds(100));
  EXPECT_EQ(again.code(), ErrorCode::kTimeout) << again.toString();
  EXPECT_EQ(calls.load(), 1);
  release.set_value();  // the abandoned callback returns into the call's own state, touching nothing freed
  bootstrap.reset();
  std::this_thread::sleep_for(milliseconds(50));
}

TEST(CallbackBootstrap, CreationRefusesBadArgumentsByName) {
  BootstrapCallbacks none;
  auto missing = createCallbackBootstrap(0, 2, none);
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(missing.status().message(), "all_gather callback is missing"));
  BootstrapCallbacks some;
  some.all_gather = [](const void*, void*, std::size_t, std::size_t*, std::int64_t) { return 0; };
  EXPECT_EQ(createCallbackBootstrap(2, 2, some).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(createCallbackBootstrap(0, 0, some).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(createCallbackBootstrap(0, 65, some).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace peerreduce
