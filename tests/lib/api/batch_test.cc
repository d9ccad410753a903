// Communicator::allreduceBatch on the simulator: how items are grouped into operations (seen through
// the profiler: one record per operation, with the items it reduced), and every error path: too many
// items, a bad item, overlapping items of one group, an aborted communicator; each refused before
// anything is enqueued, so every output stays as it was.
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "peerreduce/communicator.h"
#include "sim_cluster.h"
#include "sim_transport.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

constexpr int kBatchRanks = 3;

Config batchConfig(Algorithm algorithm = Algorithm::kAuto) {
  Config config;
  config.algorithm = algorithm;
  config.memory.pool_bytes = std::size_t{8} << 20;
  config.scratch_bytes = std::size_t{2} << 20;
  config.timeout = std::chrono::milliseconds(2000);
  return config;
}

std::unique_ptr<sim::SimCluster> makeBatchCluster(Algorithm algorithm = Algorithm::kAuto) {
  auto cluster = sim::SimCluster::create(kBatchRanks, {}, batchConfig(algorithm));
  EXPECT_TRUE(cluster.isOk()) << cluster.status().toString();
  return cluster.isOk() ? std::move(cluster).value() : nullptr;
}

// One rank's tensors: tensor t holds `counts[t]` floats of value rank + 1 (its sum over ranks is 6).
struct RankTensors {
  std::deque<std::vector<float>> data;
  std::vector<BatchItem> items;
};

RankTensors tensorsFor(int rank, const std::vector<std::size_t>& counts) {
  RankTensors t;
  for (std::size_t count : counts) {
    auto& d = t.data.emplace_back(count, static_cast<float>(rank + 1));
    t.items.push_back(BatchItem{d.data(), d.data(), count});
  }
  return t;
}

// Every rank's tensors of `counts`, each rank's changed by `change` (null: unchanged).
std::vector<RankTensors> everyRank(const std::vector<std::size_t>& counts,
                                   const std::function<void(RankTensors&)>& change = nullptr) {
  std::vector<RankTensors> ranks;
  ranks.reserve(kBatchRanks);  // items point into each rank's tensors: they must never be copied
  for (int r = 0; r < kBatchRanks; ++r) {
    ranks.push_back(tensorsFor(r, counts));
    if (change) change(ranks.back());
  }
  return ranks;
}

// Runs the batch on every rank with profiling on; returns each operation's item count (rank 0's
// records) after checking every result.
std::vector<int> runAndCountItemsPerOperation(sim::SimCluster& cluster, const std::vector<std::size_t>& counts) {
  auto ranks = everyRank(counts);
  for (int r = 0; r < kBatchRanks; ++r) EXPECT_TRUE(cluster.comm(r).enableProfiling(1024).isOk());
  for (int r = 0; r < kBatchRanks; ++r) {
    const Status s =
        cluster.comm(r).allreduceBatch(ranks[static_cast<std::size_t>(r)].items, DataType::kFloat32, ReduceOp::kSum);
    EXPECT_TRUE(s.isOk()) << s.toString();
  }
  EXPECT_TRUE(cluster.runUntilIdle().isOk());
  for (const RankTensors& t : ranks) {
    for (const auto& d : t.data) {
      for (float x : d) EXPECT_EQ(x, 6.0f);
    }
  }
  std::vector<int> per_operation;
  auto records = cluster.comm(0).profile();
  EXPECT_TRUE(records.isOk());
  if (records.isOk()) {
    for (const OperationProfile& p : *records) per_operation.push_back(p.batch_items);
  }
  return per_operation;
}

TEST(Batch, SmallItemsShareOneOperationUpToTheItemLimit) {
  auto cluster = makeBatchCluster();
  ASSERT_NE(cluster, nullptr);
  // 100 items of 1000 floats: 400,000 bytes would fit 256 KiB groups of 65, the item limit makes 64.
  const auto per_op = runAndCountItemsPerOperation(*cluster, std::vector<std::size_t>(100, 1000));
  EXPECT_EQ(per_op, (std::vector<int>{64, 36}));
}

TEST(Batch, GroupsCloseAtTheTransportsByteCapacityAndRunAsAShapeThatCarriesThem) {
  auto cluster = makeBatchCluster();
  ASSERT_NE(cluster, nullptr);
  // 10,000 floats = 40,000 bytes: 26 fit in the two-shot's 1 MiB (1,040,000), the 27th opens a new
  // group. 26 items are too many bytes for a one-shot (256 KiB), so that group is a two-shot.
  const auto per_op = runAndCountItemsPerOperation(*cluster, std::vector<std::size_t>(30, 10000));
  EXPECT_EQ(per_op, (std::vector<int>{26, 4}));
  static_assert(sim::kSimMaxOneShotBatchBytes == 262144 && sim::kSimMaxTwoShotBatchBytes == 1048576);
  auto records = cluster->comm(0).profile();
  ASSERT_TRUE(records.isOk());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].algorithm, Algorithm::kTwoShot);
  EXPECT_EQ((*records)[1].algorithm, cluster->comm(0).explainSelection(40000, DataType::kFloat32)->chosen)
      << "a group both shapes carry runs as the selector's choice for its size";
}

TEST(Batch, AForcedOneShotKeepsGroupsToTheOneShotsCapacity) {
  auto cluster = makeBatchCluster(Algorithm::kOneShot);
  ASSERT_NE(cluster, nullptr);
  // Six 40,000-byte items fit in 256 KiB (240,000), the seventh opens a new group.
  const auto per_op = runAndCountItemsPerOperation(*cluster, std::vector<std::size_t>(10, 10000));
  EXPECT_EQ(per_op, (std::vector<int>{6, 4}));
}

TEST(Batch, AnItemTooLargeForAGroupRunsAloneInItsPlace) {
  auto cluster = makeBatchCluster();
  ASSERT_NE(cluster, nullptr);
  // 300,000 floats (1.2 MB) exceed every capacity: groups before and after it, it alone between them.
  const auto per_op = runAndCountItemsPerOperation(*cluster, {16, 0, 32, 300000, 8, 8, 0});
  EXPECT_EQ(per_op, (std::vector<int>{2, 1, 2}));
}

TEST(Batch, AForcedAlgorithmOtherThanOneShotOrTwoShotRunsEveryItemOnItsOwn) {
  auto cluster = makeBatchCluster(Algorithm::kRing);
  ASSERT_NE(cluster, nullptr);
  const auto per_op = runAndCountItemsPerOperation(*cluster, {10, 20, 0, 30});
  EXPECT_EQ(per_op, (std::vector<int>{1, 1, 1}));
  auto records = cluster->comm(1).profile();
  ASSERT_TRUE(records.isOk());
  for (const OperationProfile& p : *records) EXPECT_EQ(p.algorithm, Algorithm::kRing);
}

TEST(Batch, AnEmptyBatchAndEmptyItemsDoNothing) {
  auto cluster = makeBatchCluster();
  ASSERT_NE(cluster, nullptr);
  EXPECT_TRUE(runAndCountItemsPerOperation(*cluster, {}).empty());
  EXPECT_TRUE(runAndCountItemsPerOperation(*cluster, {0, 0, 0}).empty());
}

// Every rank's refusal names the problem and leaves every tensor as it was.
void expectRefusedUntouched(sim::SimCluster& cluster, std::vector<RankTensors>& ranks, ErrorCode code,
                            const std::vector<std::string>& named) {
  for (int r = 0; r < kBatchRanks; ++r) {
    auto& t = ranks[static_cast<std::size_t>(r)];
    const Status s = cluster.comm(r).allreduceBatch(t.items, DataType::kFloat32, ReduceOp::kSum);
    EXPECT_EQ(s.code(), code) << s.toString();
    for (const std::string& part : named) EXPECT_TRUE(contains(s.toString(), part)) << s.toString();
  }
  ASSERT_TRUE(cluster.runUntilIdle().isOk());
  for (int r = 0; r < kBatchRanks; ++r) {
    for (const auto& d : ranks[static_cast<std::size_t>(r)].data) {
      for (float x : d) ASSERT_EQ(x, static_cast<float>(r + 1)) << "a refused batch wrote an output";
    }
  }
}

TEST(Batch, MoreItemsThanOneCallTakesAreRefused) {
  auto cluster = makeBatchCluster();
  ASSERT_NE(cluster, nullptr);
  auto ranks = everyRank(std::vector<std::size_t>(kMaxBatchItems + 1, 1));
  expectRefusedUntouched(*cluster, ranks, ErrorCode::kInvalidArgument,
                         {std::to_string(kMaxBatchItems + 1) + " items", "at most " + std::to_string(kMaxBatchItems)});
}

TEST(Batch, ABadItemIsNamedAndNothingIsEnqueued) {
  auto cluster = makeBatchCluster();
  ASSERT_NE(cluster, nullptr);
  // The last item is bad: the first three must not have been enqueued.
  auto ranks = everyRank({8, 8, 8, 8}, [](RankTensors& t) { t.items[3].send = nullptr; });
  expectRefusedUntouched(*cluster, ranks, ErrorCode::kInvalidArgument, {"batch item 3", "send buffer is null"});
}

TEST(Batch, OverlappingItemsOfOneGroupAreRefusedNamingBoth) {
  auto cluster = makeBatchCluster();
  ASSERT_NE(cluster, nullptr);
  // Item 2 writes into the middle of item 1's buffer.
  auto ranks =
      everyRank({8, 64, 8}, [](RankTensors& t) { t.items[2].recv = static_cast<float*>(t.items[1].recv) + 4; });
  expectRefusedUntouched(*cluster, ranks, ErrorCode::kInvalidArgument, {"batch item 1", "batch item 2", "overlap"});
}

TEST(Batch, AnAbortedCommunicatorRefusesABatch) {
  auto cluster = makeBatchCluster();
  ASSERT_NE(cluster, nullptr);
  for (int r = 0; r < kBatchRanks; ++r) cluster->comm(r).abort();
  auto ranks = everyRank({8, 8});
  expectRefusedUntouched(*cluster, ranks, ErrorCode::kAborted, {"allreduceBatch", "aborted"});
}

}  // namespace
}  // namespace peerreduce
