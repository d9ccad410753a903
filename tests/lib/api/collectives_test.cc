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

namespace peerreduce {
namespace {

constexpr float kSentinel = -12345.25f;  // no result below equals it
constexpr std::chrono::milliseconds kShortTimeout{1500};

bool contains(const std::string& text, const std::string& word) { return text.find(word) != std::string::npos; }

Config testConfig(Algorithm algorithm = Algorithm::kAuto) {
  Config config;
  config.algorithm = algorithm;
  config.timeout = kShortTimeout;
  config.bootstrap_timeout = kShortTimeout;
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
    std::vector<std::vector<float>> send(n), recv(n, std::vector<float>(count, kSentinel));
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
    std::vector<std::vector<float>> send(n), recv(n, std::vector<float>(count * n, kSentinel));
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
      std::vector<std::vector<float>> buffer(n, std::vector<float>(count, kSentinel)), send(n);
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

INSTANTIATE_TEST_SUITE_P(DirectRingAndAuto, CollectivesOnEveryAlgorithm,
                         ::testing::Values(Algorithm::kAuto, Algorithm::kOneShot, Algorithm::kRing),
                         [](const ::testing::TestParamInfo<Algorithm>& param) {
                           return param.param == Algorithm::kAuto      ? std::string("auto")
                                  : param.param == Algorithm::kOneShot ? std::string("one_shot")
                                                                       : std::string("ring");
                         });

// ---- rejected arguments ------------------------------------------------------------------------------

class CollectiveArguments : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = makeCluster(kRanks);
    ASSERT_NE(cluster_, nullptr);
    big_.assign(kCount * kRanks, 1.5f);
    small_.assign(kCount, kSentinel);
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
    EXPECT_EQ(small_, std::vector<float>(kCount, kSentinel));
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

// A star around rank 0: no cycle (no ring) and no full mesh (no direct reduce-scatter or all-gather);
// broadcasts from the centre read only the centre's memory, from elsewhere they cannot run. The
// allreduce (a tree) is unaffected.
TEST(CollectiveTopology, ACollectiveWithNoPlanHereIsRefusedAloneNamingWhy) {
  sim::SimOptions options;
  options.topology = Topology(4);
  for (int r = 1; r < 4; ++r) options.topology.setBidirectional(0, r, Topology::defaultNvLink());
  auto cluster = makeCluster(4, Algorithm::kAuto, options);
  ASSERT_NE(cluster, nullptr);
  std::vector<float> send(64, 2.0f), recv(16, 0.0f);
  const Status rs = cluster->comm(2).reduceScatter(send.data(), recv.data(), 16, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(rs.code(), ErrorCode::kUnavailable) << rs.toString();
  EXPECT_TRUE(contains(rs.message(), "reduce-scatter on rank 2: no plan can run on this topology")) << rs.message();
  const Status from_leaf = cluster->comm(2).broadcast(send.data(), recv.data(), 16, DataType::kFloat32, 1);
  EXPECT_EQ(from_leaf.code(), ErrorCode::kUnavailable) << from_leaf.toString();
  std::vector<std::vector<float>> data(4, std::vector<float>(16, 0.0f));
  data[0].assign(16, 3.0f);
  for (int r = 0; r < 4; ++r) {
    ASSERT_TRUE(cluster->comm(r).broadcast(data[r].data(), data[r].data(), 16, DataType::kFloat32, 0).isOk());
  }
  ASSERT_TRUE(cluster->runUntilIdle().isOk());
  for (int r = 0; r < 4; ++r) EXPECT_EQ(data[r], std::vector<float>(16, 3.0f)) << "rank " << r;
}

}  // namespace
}  // namespace peerreduce
