// avg with NCCL's semantics through the communicator, on the simulator, with exact bits: floating types
// premultiply every input by 1/n (rounded to the type) and sum, integers sum and divide. Each case is
// chosen so that every fold order gives the same bits (so every algorithm must), and so that dividing a
// sum afterwards would give other bits or overflow.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "peerreduce/communicator.h"
#include "sim/sim_cluster.h"

namespace peerreduce {
namespace {

constexpr std::size_t kAvgCount = 37;  // several chunks of every plan, none a multiple of anything
constexpr std::uint64_t kSentinelBits = 0x5A5A5A5A5A5A5A5Au;

// One case: every rank's value (each rank's whole buffer holds it) and the bits every output element
// must hold.
struct AvgCase {
  std::string name;
  DataType dtype;
  std::vector<std::uint64_t> inputs;  // per rank, bits
  std::uint64_t expected;             // bits
};

std::vector<unsigned char> filled(DataType dtype, std::uint64_t bits, std::size_t count) {
  std::vector<unsigned char> bytes(count * dataTypeSize(dtype));
  for (std::size_t i = 0; i < count; ++i)
    std::memcpy(bytes.data() + i * dataTypeSize(dtype), &bits, dataTypeSize(dtype));
  return bytes;
}

const std::vector<AvgCase>& cases() {
  static const std::vector<AvgCase> all = {
      // Two maxima: each term is MAX/2 exactly, their sum MAX; a sum divided afterwards is inf.
      {"fp32_max_x2", DataType::kFloat32, {0x7F7FFFFF, 0x7F7FFFFF}, 0x7F7FFFFF},
      {"fp64_max_x2", DataType::kFloat64, {0x7FEFFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF}, 0x7FEFFFFFFFFFFFFF},
      {"bf16_max_x2", DataType::kBFloat16, {0x7F7F, 0x7F7F}, 0x7F7F},
      {"fp16_max_x2", DataType::kFloat16, {0x7BFF, 0x7BFF}, 0x7BFF},
      // Four maxima: terms MAX/4; 2 and 4 terms sum exactly, 3 round down and the fourth restores MAX.
      {"fp32_max_x4", DataType::kFloat32, {0x7F7FFFFF, 0x7F7FFFFF, 0x7F7FFFFF, 0x7F7FFFFF}, 0x7F7FFFFF},
      {"fp16_max_x4", DataType::kFloat16, {0x7BFF, 0x7BFF, 0x7BFF, 0x7BFF}, 0x7BFF},
      // The 8-bit floats, which round every step: e4m3's 448 over two ranks is 224 + 224; over four, terms of 112
      // sum to 224 + 224 or, in rank order, 336 (a tie between 320 and 352: the even 320) + 112 = 432 (a tie
      // between 416 and 448: the even 448). e5m2's 57344: 28672 x 2; over four, 14336 x 4 reaches 57344 either
      // way (43008 rounds to 40960, + 14336 = 55296 rounds up to 57344). A sum divided afterwards overflows
      // e5m2 to infinity.
      {"fp8e4m3_max_x2", DataType::kFloat8E4M3, {0x7E, 0x7E}, 0x7E},
      {"fp8e4m3_max_x4", DataType::kFloat8E4M3, {0x7E, 0x7E, 0x7E, 0x7E}, 0x7E},
      {"fp8e5m2_max_x2", DataType::kFloat8E5M2, {0x7B, 0x7B}, 0x7B},
      {"fp8e5m2_max_x4", DataType::kFloat8E5M2, {0x7B, 0x7B, 0x7B, 0x7B}, 0x7B},
      // {1, 2, 2} over 3: r = 0x3EAAAAAB, terms r, 2r, 2r; either fold order rounds (3r or 4r, then 5r)
      // to 0x3FD55556, where 5/3 rounded (a divided sum) is 0x3FD55555.
      {"fp32_thirds", DataType::kFloat32, {0x3F800000, 0x40000000, 0x40000000}, 0x3FD55556},
      // 1 + 2^-10 three times: each term rounds to 0x3556, their sum to 1 + 2^-11, a tie: 1.0 (0x3C00);
      // a divided sum is 1 + 2^-10 (0x3C01).
      {"fp16_thirds", DataType::kFloat16, {0x3C01, 0x3C01, 0x3C01}, 0x3C00},
      // Integers: the sum divided, truncated toward zero: (7 + 8 + 10) / 3 = 8, (-7 - 8 - 10) / 3 = -8.
      {"int32_sum_then_divide", DataType::kInt32, {7, 8, 10}, 8},
      {"int64_negative_truncates",
       DataType::kInt64,
       {~std::uint64_t{6}, ~std::uint64_t{7}, ~std::uint64_t{9}},
       ~std::uint64_t{7}},
  };
  return all;
}

// Every element of rank `rank`'s output holds the case's expected bits.
void expectExpectedBits(const AvgCase& c, const unsigned char* out, int rank, bool in_place) {
  for (std::size_t i = 0; i < kAvgCount; ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, out + i * dataTypeSize(c.dtype), dataTypeSize(c.dtype));
    ASSERT_EQ(bits, c.expected) << c.name << ": rank " << rank << " element " << i << (in_place ? " in place" : "");
  }
}

std::unique_ptr<sim::SimCluster> makeAvgCluster(int n, Algorithm algorithm) {
  Config config;
  config.algorithm = algorithm;
  auto cluster = sim::SimCluster::create(n, sim::SimOptions{}, config);
  EXPECT_TRUE(cluster.isOk()) << cluster.status().toString();
  return cluster.isOk() ? std::move(cluster).value() : nullptr;
}

class AvgOnEveryAlgorithm : public ::testing::TestWithParam<Algorithm> {};

TEST_P(AvgOnEveryAlgorithm, AllreduceGivesTheExactBitsOutOfPlaceAndInPlace) {
  for (const AvgCase& c : cases()) {
    const int n = static_cast<int>(c.inputs.size());
    auto cluster = makeAvgCluster(n, GetParam());
    ASSERT_NE(cluster, nullptr);
    for (const bool in_place : {false, true}) {
      std::vector<std::vector<unsigned char>> send(n), recv(n);
      for (int r = 0; r < n; ++r) {
        send[r] = filled(c.dtype, c.inputs[static_cast<std::size_t>(r)], kAvgCount);
        recv[r] = filled(c.dtype, kSentinelBits, kAvgCount);
        void* out = in_place ? send[r].data() : recv[r].data();
        ASSERT_TRUE(cluster->comm(r).allreduce(send[r].data(), out, kAvgCount, c.dtype, ReduceOp::kAvg).isOk());
      }
      ASSERT_TRUE(cluster->runUntilIdle().isOk());
      for (int r = 0; r < n; ++r) expectExpectedBits(c, (in_place ? send[r] : recv[r]).data(), r, in_place);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryAlgorithm, AvgOnEveryAlgorithm,
                         ::testing::Values(Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing,
                                           Algorithm::kRecursiveDoubling, Algorithm::kRabenseifner, Algorithm::kTree),
                         [](const ::testing::TestParamInfo<Algorithm>& param) {
                           std::string name(algorithmName(param.param));
                           for (auto& ch : name) ch = ch == '-' ? '_' : ch;
                           return name;
                         });

class AvgReduceScatter : public ::testing::TestWithParam<Algorithm> {};

TEST_P(AvgReduceScatter, EveryBlockGetsTheExactBitsOutOfPlaceAndInPlace) {
  for (const AvgCase& c : cases()) {
    const int n = static_cast<int>(c.inputs.size());
    auto cluster = makeAvgCluster(n, GetParam());
    ASSERT_NE(cluster, nullptr);
    const std::size_t block_bytes = kAvgCount * dataTypeSize(c.dtype);
    for (const bool in_place : {false, true}) {
      std::vector<std::vector<unsigned char>> send(n), recv(n);
      for (int r = 0; r < n; ++r) {
        send[r] = filled(c.dtype, c.inputs[static_cast<std::size_t>(r)], kAvgCount * static_cast<std::size_t>(n));
        recv[r] = filled(c.dtype, kSentinelBits, kAvgCount);
        void* out = in_place ? send[r].data() + static_cast<std::size_t>(r) * block_bytes : recv[r].data();
        ASSERT_TRUE(cluster->comm(r).reduceScatter(send[r].data(), out, kAvgCount, c.dtype, ReduceOp::kAvg).isOk());
      }
      ASSERT_TRUE(cluster->runUntilIdle().isOk());
      for (int r = 0; r < n; ++r) {
        const unsigned char* out =
            in_place ? send[r].data() + static_cast<std::size_t>(r) * block_bytes : recv[r].data();
        expectExpectedBits(c, out, r, in_place);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DirectAndRing, AvgReduceScatter, ::testing::Values(Algorithm::kOneShot, Algorithm::kRing),
                         [](const ::testing::TestParamInfo<Algorithm>& param) {
                           return param.param == Algorithm::kOneShot ? std::string("one_shot") : std::string("ring");
                         });

}  // namespace
}  // namespace peerreduce
