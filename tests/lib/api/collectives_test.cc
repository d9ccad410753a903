// Communicator::reduceScatter, allGather and broadcast on the simulator: NCCL's buffer semantics (out
// of place and in place, the root's send only), every rejected argument named and leaving the buffers
// and the world as they were, ranks calling different collectives failing together, and a topology
// that carries no plan of a collective refusing that collective alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "peerreduce/communicator.h"
#include "peerreduce/simulator.h"
#include "sim/sim_cluster.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

constexpr float kCollectivesSentinel = -12345.25f;  // no result below equals it
constexpr std::chrono::milliseconds kCollectivesShortTimeout{1500};

using peerreduce::testing::contains;

Config testConfig(Algorithm algorithm = Algorithm::kAuto) {
  Config config;
  config.algorithm = algorithm;
  config.timeout = kCollectivesShortTimeout;
  config.bootstrap_timeout = kCollectivesShortTimeout;
  return config;
}

std::unique_ptr<sim::SimCluster> makeCluster(int n, Algorithm algorithm = Algorithm::kAuto,
                                             sim::SimOptions options = {}) {
  auto cluster = sim::SimCluster::create(n, std::move(options), testConfig(algorithm));
  EXPECT_TRUE(cluster.isOk()) << cluster.status().toString();
  return cluster.isOk() ? std::move(cluster).value() : nullptr;
}

// Rank r's element i of block b: distinct everywhere, exact in fp32 sums.
float valueOf(int rank, int block, std::size_t i) {
  return static_cast<float>(rank * 1000 + block * 100) + static_cast<float>(i);
}

class CollectivesOnEveryAlgorithm : public ::testing::TestWithParam<Algorithm> {};

TEST_P(CollectivesOnEveryAlgorithm, ReduceScatterOutOfPlaceAndInPlace) {
  const int n = 3;
  const std::size_t count = 37;  // not a multiple of anything the chunking likes
  auto cluster = makeCluster(n, GetParam());
  ASSERT_NE(cluster, nullptr);
  for (bool in_place : {false, true}) {
    std::vector<std::vector<float>> send(n), recv(n, std::vector<float>(count, kCollectivesSentinel));
    for (int r = 0; r < n; ++r) {
      for (int b = 0; b < n; ++b) {
        for (std::size_t i = 0; i < count; ++i) send[r].push_back(valueOf(r, b, i));
      }
      float* out = in_place ? send[r].data() + static_cast<std::size_t>(r) * count : recv[r].data();
      ASSERT_TRUE(
          cluster->comm(r).reduceScatter(send[r].data(), out, count, DataType::kFloat32, ReduceOp::kSum).isOk());
    }
    ASSERT_TRUE(cluster->runUntilIdle().isOk());
    for (int r = 0; r < n; ++r) {
      const float* out = in_place ? send[r].data() + static_cast<std::size_t>(r) * count : recv[r].data();
      for (std::size_t i = 0; i < count; ++i) {
        const float expected = valueOf(0, r, i) + valueOf(1, r, i) + valueOf(2, r, i);
        ASSERT_EQ(out[i], expected) << "rank " << r << " element " << i << (in_place ? " in place" : "");
      }
    }
  }
}

TEST_P(CollectivesOnEveryAlgorithm, AllGatherOutOfPlaceAndInPlace) {
  const int n = 4;
  const std::size_t count = 21;
  auto cluster = makeCluster(n, GetParam());
  ASSERT_NE(cluster, nullptr);
  for (bool in_place : {false, true}) {
    std::vector<std::vector<float>> send(n), recv(n, std::vector<float>(count * n, kCollectivesSentinel));
    for (int r = 0; r < n; ++r) {
      for (std::size_t i = 0; i < count; ++i) send[r].push_back(valueOf(r, 0, i));
      const float* in = send[r].data();
      if (in_place) {
        std::copy(send[r].begin(), send[r].end(), recv[r].begin() + static_cast<std::ptrdiff_t>(r * count));
        in = recv[r].data() + static_cast<std::size_t>(r) * count;
      }
      ASSERT_TRUE(cluster->comm(r).allGather(in, recv[r].data(), count, DataType::kFloat32).isOk());
    }
    ASSERT_TRUE(cluster->runUntilIdle().isOk());
    for (int r = 0; r < n; ++r) {
      for (int b = 0; b < n; ++b) {
        for (std::size_t i = 0; i < count; ++i) {
          ASSERT_EQ(recv[r][static_cast<std::size_t>(b) * count + i], valueOf(b, 0, i))
              << "rank " << r << " block " << b << " element " << i << (in_place ? " in place" : "");
        }
      }
    }
  }
}

TEST_P(CollectivesOnEveryAlgorithm, BroadcastFromEveryRootReadsOnlyTheRootsSend) {
  const int n = 3;
  const std::size_t count = 1000;
  auto cluster = makeCluster(n, GetParam());
  ASSERT_NE(cluster, nullptr);
  for (int root = 0; root < n; ++root) {
    for (bool in_place : {false, true}) {
      std::vector<std::vector<float>> buffer(n, std::vector<float>(count, kCollectivesSentinel)), send(n);
      for (std::size_t i = 0; i < count; ++i) send[root].push_back(valueOf(root, 7, i));
      if (in_place) buffer[root] = send[root];
      for (int r = 0; r < n; ++r) {
        // Non-roots pass no send buffer at all: it must never be read.
        const void* in = r != root ? nullptr : in_place ? buffer[r].data() : send[r].data();
        const Status s = cluster->comm(r).broadcast(in, buffer[r].data(), count, DataType::kFloat32, root);
        ASSERT_TRUE(s.isOk()) << s.toString();
      }
      ASSERT_TRUE(cluster->runUntilIdle().isOk());
      for (int r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < count; ++i) {
          ASSERT_EQ(buffer[r][i], valueOf(root, 7, i)) << "root " << root << " rank " << r << " element " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryAlgorithmAndAuto, CollectivesOnEveryAlgorithm,
                         ::testing::Values(Algorithm::kAuto, Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing,
                                           Algorithm::kRecursiveDoubling, Algorithm::kTree),
                         [](const ::testing::TestParamInfo<Algorithm>& param) {
                           std::string name(algorithmName(param.param));
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// ---- rejected arguments ------------------------------------------------------------------------------

class CollectiveArguments : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = makeCluster(kRanks);
    ASSERT_NE(cluster_, nullptr);
    big_.assign(kCount * kRanks, 1.5f);
    small_.assign(kCount, kCollectivesSentinel);
  }

  Communicator& comm() { return cluster_->comm(kRank); }

  // The call fails with kInvalidArgument and a message holding `call` and `says`; nothing was enqueued
  // and no buffer changed.
  void expectRejected(const Status& status, const std::string& call, const std::string& says) {
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument) << status.toString();
    EXPECT_TRUE(contains(status.message(), call + " on rank 1: ")) << status.message();
    EXPECT_TRUE(contains(status.message(), says)) << "expected '" << says << "' in: " << status.message();
    ASSERT_TRUE(cluster_->runUntilIdle().isOk());
    EXPECT_EQ(cluster_->world().stats().operations, 0u) << "a rejected call enqueued work";
    EXPECT_EQ(big_, std::vector<float>(kCount * kRanks, 1.5f));
    EXPECT_EQ(small_, std::vector<float>(kCount, kCollectivesSentinel));
  }

  static constexpr int kRanks = 3;
  static constexpr int kRank = 1;
  static constexpr std::size_t kCount = 16;
  std::unique_ptr<sim::SimCluster> cluster_;
  std::vector<float> big_;    // size x count: reduce-scatter's send, all-gather's recv
  std::vector<float> small_;  // count
};

TEST_F(CollectiveArguments, NullBuffersAreRejected) {
  const auto f32 = DataType::kFloat32;
  expectRejected(comm().reduceScatter(nullptr, small_.data(), kCount, f32, ReduceOp::kSum), "reduceScatter",
                 "send buffer is null with count 16");
  expectRejected(comm().reduceScatter(big_.data(), nullptr, kCount, f32, ReduceOp::kSum), "reduceScatter",
                 "recv buffer is null with count 16");
  expectRejected(comm().allGather(nullptr, big_.data(), kCount, f32), "allGather", "send buffer is null");
  expectRejected(comm().allGather(small_.data(), nullptr, kCount, f32), "allGather", "recv buffer is null");
  expectRejected(comm().broadcast(small_.data(), nullptr, kCount, f32, 0), "broadcast", "recv buffer is null");
  // The root's send is read, so the root must pass one (this is rank 1).
  expectRejected(comm().broadcast(nullptr, small_.data(), kCount, f32, kRank), "broadcast", "send buffer is null");
}

TEST_F(CollectiveArguments, BadRootIsRejectedEvenForNothing) {
  expectRejected(comm().broadcast(small_.data(), small_.data(), kCount, DataType::kFloat32, kRanks), "broadcast",
                 "root 3 is outside 0..2 for a world of 3");
  expectRejected(comm().broadcast(nullptr, nullptr, 0, DataType::kFloat32, -1), "broadcast", "root -1");
}

TEST_F(CollectiveArguments, OverlapOtherThanNcclsInPlaceIsRejected) {
  // Reduce-scatter in place is recv == send + rank x recvcount; one element off overlaps.
  expectRejected(
      comm().reduceScatter(big_.data(), big_.data() + kCount + 1, kCount, DataType::kFloat32, ReduceOp::kSum),
      "reduceScatter", "without being this rank's block of it");
  // Rank 1's block of recv starts at recv + 16 elements; send at recv + 0 overlaps block 0 instead.
  expectRejected(comm().allGather(big_.data(), big_.data(), kCount, DataType::kFloat32), "allGather",
                 "send must be recv + rank x sendcount elements");
  expectRejected(comm().broadcast(small_.data(), small_.data() + 1, kCount / 2, DataType::kFloat32, kRank), "broadcast",
                 "overlap over 32 bytes without being identical");
}

TEST_F(CollectiveArguments, CountsWhoseBytesOverflowAreRejected) {
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 8;  // x 3 ranks x 4 bytes overflows
  expectRejected(comm().reduceScatter(big_.data(), small_.data(), huge, DataType::kFloat32, ReduceOp::kSum),
                 "reduceScatter", "3 ranks x recvcount");
  expectRejected(comm().allGather(small_.data(), big_.data(), huge, DataType::kFloat32), "allGather",
                 "overflows the address space");
  expectRejected(comm().broadcast(small_.data(), small_.data(), std::numeric_limits<std::size_t>::max() / 2,
                                  DataType::kFloat32, 0),
                 "broadcast", "overflows the address space");
}

TEST_F(CollectiveArguments, UnknownDtypeOrOpAndMisalignmentAreRejected) {
  expectRejected(comm().reduceScatter(big_.data(), small_.data(), kCount, DataType::kFloat32, static_cast<ReduceOp>(9)),
                 "reduceScatter", "unknown op value 9");
  expectRejected(comm().allGather(small_.data(), big_.data(), 0, static_cast<DataType>(99)), "allGather",
                 "unknown dtype value 99");
  const auto* odd = reinterpret_cast<const unsigned char*>(small_.data()) + 2;
  expectRejected(comm().broadcast(odd, big_.data(), 4, DataType::kFloat32, kRank), "broadcast",
                 "is not aligned to its 4-byte fp32 elements");
}

TEST_F(CollectiveArguments, CountZeroIsANoOp) {
  EXPECT_TRUE(comm().reduceScatter(nullptr, nullptr, 0, DataType::kFloat32, ReduceOp::kSum).isOk());
  EXPECT_TRUE(comm().allGather(nullptr, nullptr, 0, DataType::kInt8).isOk());
  EXPECT_TRUE(comm().broadcast(nullptr, nullptr, 0, DataType::kInt8, 2).isOk());
  ASSERT_TRUE(cluster_->runUntilIdle().isOk());
  EXPECT_EQ(cluster_->world().stats().operations, 0u);
}

TEST(CollectiveAgreement, RanksCallingDifferentCollectivesFailTogether) {
  auto cluster = makeCluster(2);
  ASSERT_NE(cluster, nullptr);
  std::vector<float> a(8, 1.0f), b(16, 1.0f);
  ASSERT_TRUE(cluster->comm(0).allGather(a.data(), b.data(), 8, DataType::kFloat32).isOk());
  const Status second = cluster->comm(1).broadcast(a.data(), a.data(), 8, DataType::kFloat32, 1);
  EXPECT_EQ(second.code(), ErrorCode::kMismatch) << second.toString();
  EXPECT_TRUE(contains(second.message(), "collective all-gather vs broadcast")) << second.message();
  EXPECT_EQ(cluster->runUntilIdle().code(), ErrorCode::kMismatch);
}

// A star around rank 0: no cycle (no ring) and no full mesh (no direct reduce-scatter or all-gather, no
// recursive exchange). Every collective still runs, through the relay trees (broadcast from a leaf too:
// its tree goes up to the centre and down), and gives the exact result; the choice names the tree.
TEST(CollectiveTopology, AStarCarriesEveryCollectiveThroughRelayTrees) {
  sim::SimOptions options;
  options.topology = Topology(4);
  for (int r = 1; r < 4; ++r) options.topology.setBidirectional(0, r, Topology::defaultNvLink());
  auto cluster = makeCluster(4, Algorithm::kAuto, options);
  ASSERT_NE(cluster, nullptr);
  constexpr std::size_t kCount = 16;
  std::vector<std::vector<float>> send(4), recv(4, std::vector<float>(kCount, kCollectivesSentinel));
  for (int r = 0; r < 4; ++r) {
    for (int b = 0; b < 4; ++b) {
      for (std::size_t i = 0; i < kCount; ++i) send[r].push_back(valueOf(r, b, i));
    }
    ASSERT_TRUE(cluster->comm(r)
                    .reduceScatter(send[r].data(), recv[r].data(), kCount, DataType::kFloat32, ReduceOp::kSum)
                    .isOk());
  }
  ASSERT_TRUE(cluster->runUntilIdle().isOk());
  for (int r = 0; r < 4; ++r) {
    for (std::size_t i = 0; i < kCount; ++i) {
      float sum = 0;
      for (int q = 0; q < 4; ++q) sum += valueOf(q, r, i);
      ASSERT_EQ(recv[r][i], sum) << "rank " << r << " element " << i;
    }
  }
  auto report = cluster->comm(2).explainSelection(Collective::kReduceScatter, kCount, DataType::kFloat32);
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(report->chosen, Algorithm::kTree);
  EXPECT_TRUE(contains(report->plan, "tree rooted at 0")) << report->plan;
  std::vector<std::vector<float>> data(4, std::vector<float>(kCount, 0.0f));
  data[1].assign(kCount, 3.0f);
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(cluster->comm(r).broadcast(data[r].data(), data[r].data(), kCount, DataType::kFloat32, 1).isOk());
  }
  ASSERT_TRUE(cluster->runUntilIdle().isOk());
  for (int r = 0; r < 4; ++r) EXPECT_EQ(data[r], std::vector<float>(kCount, 3.0f)) << "rank " << r;
  auto from_leaf = cluster->comm(0).explainSelection(Collective::kBroadcast, kCount, DataType::kFloat32, 1);
  ASSERT_TRUE(from_leaf.isOk());
  EXPECT_TRUE(contains(from_leaf->plan, "broadcast tree rooted at 1, height 2")) << from_leaf->plan;
}

// A hypercube of links (v linked to v^1, v^2, v^4): no full mesh, so no one-shot; recursive halving and
// doubling read only their partners, so they run, and the cost model picks them over the ring and the
// relay tree for reduce-scatter and all-gather of medium messages.
TEST(CollectiveTopology, TheSelectorPicksTheRecursivePlansWhereTheirPartnersAreLinked) {
  sim::SimOptions options;
  options.topology = Topology(8);
  for (int v = 0; v < 8; ++v) {
    for (int bit : {1, 2, 4}) options.topology.setBidirectional(v, v ^ bit, Topology::defaultNvLink());
  }
  auto cluster = makeCluster(8, Algorithm::kAuto, options);
  ASSERT_NE(cluster, nullptr);
  for (Collective collective : {Collective::kReduceScatter, Collective::kAllGather}) {
    auto report = cluster->comm(0).explainSelection(collective, 1 << 16, DataType::kFloat32);
    ASSERT_TRUE(report.isOk()) << report.status().toString();
    EXPECT_EQ(report->chosen, Algorithm::kRecursiveDoubling) << collectiveName(collective) << ": " << report->plan;
    bool one_shot_excluded = false;
    for (const auto& why : report->excluded) one_shot_excluded = one_shot_excluded || contains(why, "one-shot");
    EXPECT_TRUE(one_shot_excluded) << collectiveName(collective);
  }
}

// Each collective's own setting forces it, over PEERREDUCE_ALGO, and leaves the others alone; one the
// topology cannot carry is kInvalidArgument at that collective's first call, naming the setting.
TEST(CollectiveSettings, EachCollectivesOwnAlgorithmForcesItAlone) {
  Config config = testConfig(Algorithm::kRing);
  config.all_gather_algorithm = Algorithm::kRecursiveDoubling;
  config.broadcast_algorithm = Algorithm::kTree;
  auto cluster = sim::SimCluster::create(5, {}, config);
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  const struct {
    Collective collective;
    Algorithm expected;
  } cases[] = {{Collective::kAllReduce, Algorithm::kRing},
               {Collective::kReduceScatter, Algorithm::kRing},  // PEERREDUCE_ALGO, which it has
               {Collective::kAllGather, Algorithm::kRecursiveDoubling},
               {Collective::kBroadcast, Algorithm::kTree}};
  for (const auto& c : cases) {
    auto report = (*cluster)->comm(3).explainSelection(c.collective, 1000, DataType::kFloat32, 2);
    ASSERT_TRUE(report.isOk()) << report.status().toString();
    EXPECT_EQ(report->chosen, c.expected) << collectiveName(c.collective);
    EXPECT_TRUE(report->forced) << collectiveName(c.collective);
  }
  // Recursive halving needs partners 0-1 linked; the mask removes that link (a ring 0-2-1-3-4 remains).
  Config masked = testConfig();
  masked.link_mask = "0-1";
  masked.reduce_scatter_algorithm = Algorithm::kRecursiveDoubling;
  auto cut = sim::SimCluster::create(5, {}, masked);
  ASSERT_TRUE(cut.isOk()) << cut.status().toString();
  std::vector<float> send(5 * 8, 1.0f), recv(8, 0.0f);
  const Status refused = (*cut)->comm(1).reduceScatter(send.data(), recv.data(), 8, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(refused.code(), ErrorCode::kInvalidArgument) << refused.toString();
  EXPECT_TRUE(contains(refused.message(),
                       "the configured reduce-scatter algorithm recursive-doubling (PEERREDUCE_ALGO_REDUCE_SCATTER) "
                       "cannot run on this topology"))
      << refused.message();
  // The allreduce and the other collectives of that communicator are unaffected.
  auto all_gather = (*cut)->comm(1).explainSelection(Collective::kAllGather, 8, DataType::kFloat32);
  EXPECT_TRUE(all_gather.isOk()) << all_gather.status().toString();
  // A value the collective does not have is refused by validation, naming the setting and the choices.
  Config wrong = testConfig();
  wrong.broadcast_algorithm = Algorithm::kRecursiveDoubling;
  const Status invalid = wrong.validate();
  EXPECT_EQ(invalid.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(invalid.message(), "PEERREDUCE_ALGO_BROADCAST")) << invalid.message();
}

// explainSelection for each collective: the plan the call would run (one of the candidates, each with an
// estimate), the same on every rank, what the call then runs; bad values named.
TEST(CollectiveSelection, EachCollectiveExplainsItsChoiceAndBadValuesAreNamed) {
  auto cluster = makeCluster(4, Algorithm::kRing);
  ASSERT_NE(cluster, nullptr);
  for (Collective collective :
       {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    SCOPED_TRACE(std::string(collectiveName(collective)));
    auto report = cluster->comm(1).explainSelection(collective, 1000, DataType::kFloat32, 2);
    ASSERT_TRUE(report.isOk()) << report.status().toString();
    EXPECT_EQ(report->chosen, Algorithm::kRing);  // forced
    EXPECT_TRUE(report->forced);
    EXPECT_FALSE(report->candidates.empty());
    bool listed = false;
    for (const auto& c : report->candidates) listed = listed || (c.algorithm == report->chosen && c.predicted_us > 0);
    EXPECT_TRUE(listed) << "the chosen plan has no estimate";
    auto other = cluster->comm(3).explainSelection(collective, 1000, DataType::kFloat32, 2);
    ASSERT_TRUE(other.isOk());
    EXPECT_EQ(other->plan, report->plan) << "ranks explain different plans";
  }
  auto automatic = makeCluster(4);
  ASSERT_NE(automatic, nullptr);
  auto small = automatic->comm(0).explainSelection(Collective::kAllGather, 16, DataType::kFloat32);
  ASSERT_TRUE(small.isOk());
  EXPECT_FALSE(small->forced);
  EXPECT_EQ(small->chosen, small->candidates.front().algorithm) << "auto picks the cheapest estimate";
  // An algorithm the collective does not have does not apply to it: chosen by the cost model, not forced.
  auto two_shot = makeCluster(4, Algorithm::kTwoShot);
  ASSERT_NE(two_shot, nullptr);
  auto unforced = two_shot->comm(0).explainSelection(Collective::kReduceScatter, 16, DataType::kFloat32);
  ASSERT_TRUE(unforced.isOk());
  EXPECT_FALSE(unforced->forced);
  EXPECT_NE(unforced->chosen, Algorithm::kTwoShot);
  const Status bad_root = cluster->comm(0).explainSelection(Collective::kBroadcast, 8, DataType::kFloat32, 4).status();
  EXPECT_EQ(bad_root.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(bad_root.message(), "root 4 outside 0..3")) << bad_root.message();
  const Status bad_collective =
      cluster->comm(0).explainSelection(static_cast<Collective>(9), 8, DataType::kFloat32).status();
  EXPECT_EQ(bad_collective.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(bad_collective.message(), "unknown collective value 9")) << bad_collective.message();
  const Status bad_dtype =
      cluster->comm(0).explainSelection(Collective::kReduceScatter, 8, static_cast<DataType>(77)).status();
  EXPECT_EQ(bad_dtype.code(), ErrorCode::kInvalidArgument);
  const Status overflow =
      cluster->comm(0)
          .explainSelection(Collective::kAllGather, std::numeric_limits<std::size_t>::max() / 8, DataType::kFloat32)
          .status();
  EXPECT_EQ(overflow.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(overflow.message(), "overflows")) << overflow.message();
}

}  // namespace
}  // namespace peerreduce
