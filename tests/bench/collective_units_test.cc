// peerreduce-bench's per-collective facts (bench/collective_units.h), checked without a GPU: nccl-tests'
// sizes and bus bandwidth factors, NCCL's in-place aliasing, and the input / expected-result pair run
// through every collective on the simulator with the benchmark's own call (bench/collective_call.h):
// a correct run counts no wrong element, a run that did not happen or one corrupted element is counted.
#include "collective_units.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "collective_call.h"
#include "sim_cluster.h"

namespace peerreduce::bench {
namespace {

constexpr Collective kEvery[] = {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather,
                                 Collective::kBroadcast};

TEST(CollectiveUnits, SizesAreNcclTestsSizeColumn) {
  EXPECT_EQ(reportedBytes(Collective::kAllReduce, 1000, 4, 4), 4000u);
  EXPECT_EQ(reportedBytes(Collective::kBroadcast, 1000, 4, 2), 2000u);
  EXPECT_EQ(reportedBytes(Collective::kReduceScatter, 1000, 4, 4), 16000u) << "the send buffer";
  EXPECT_EQ(reportedBytes(Collective::kAllGather, 1000, 8, 2), 16000u) << "the receive buffer";
  EXPECT_EQ(countForBytes(Collective::kAllReduce, 4096, 4, 4), 1024u);
  EXPECT_EQ(countForBytes(Collective::kReduceScatter, 4096, 4, 4), 256u);
  EXPECT_EQ(countForBytes(Collective::kAllGather, 4100, 4, 4), 256u) << "rounds down, as nccl-tests does";
  EXPECT_EQ(countForBytes(Collective::kAllGather, 12, 4, 4), 0u) << "less than one element per rank";
  EXPECT_EQ(countForBytes(Collective::kBroadcast, 4096, 0, 4), 0u);
  for (Collective c : kEvery) {
    EXPECT_EQ(reportedBytes(c, countForBytes(c, 1 << 20, 8, 4), 8, 4), std::size_t{1} << 20) << c;
  }
}

TEST(CollectiveUnits, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kAllReduce, 1), 0.0);
}

TEST(CollectiveUnits, InPlaceIsNcclsAliasing) {
  const Placement rs = placementOf(Collective::kReduceScatter, true, 2, 4, 100, 4);
  EXPECT_EQ(rs.send_in, Allocation::kSend);
  EXPECT_EQ(rs.send_elems, 400u);
  EXPECT_EQ(rs.recv_in, Allocation::kSend) << "recvbuff = sendbuff + rank x recvcount";
  EXPECT_EQ(rs.recv_offset, 800u);
  EXPECT_EQ(rs.recv_elems, 100u);
  const Placement ag = placementOf(Collective::kAllGather, true, 3, 4, 100, 2);
  EXPECT_EQ(ag.send_in, Allocation::kRecv) << "sendbuff = recvbuff + rank x sendcount";
  EXPECT_EQ(ag.send_offset, 600u);
  EXPECT_EQ(ag.send_elems, 100u);
  EXPECT_EQ(ag.recv_in, Allocation::kRecv);
  EXPECT_EQ(ag.recv_elems, 400u);
  for (Collective c : {Collective::kAllReduce, Collective::kBroadcast}) {
    const Placement one = placementOf(c, true, 1, 4, 100, 4);
    EXPECT_EQ(one.send_in, Allocation::kSend) << c;
    EXPECT_EQ(one.recv_in, Allocation::kSend) << c;
    EXPECT_EQ(one.send_offset, one.recv_offset) << c;
  }
  for (Collective c : kEvery) {
    const Placement out = placementOf(c, false, 1, 4, 100, 4);
    EXPECT_EQ(out.send_in, Allocation::kSend) << c;
    EXPECT_EQ(out.recv_in, Allocation::kRecv) << c;
    EXPECT_EQ(out.send_offset + out.recv_offset, 0u) << c;
  }
  EXPECT_TRUE(readsInput(Collective::kBroadcast, 2, 2));
  EXPECT_FALSE(readsInput(Collective::kBroadcast, 1, 2));
  EXPECT_TRUE(readsInput(Collective::kAllGather, 1, 2));
}

// The benchmark's correctness check end to end, on the simulator: buffers laid out by placementOf,
// poisoned, inputs uploaded where read, the call made on every rank, the receive buffer checked.
class SimulatedCheck : public ::testing::TestWithParam<std::tuple<Collective, bool, DataType>> {};

TEST_P(SimulatedCheck, ACorrectRunHasNoWrongElementAndAMissingOrCorruptOneIsCounted) {
  const auto [collective, in_place, dtype] = GetParam();
  constexpr int kRanks = 3;  // not a power of two: the folding plans run too
  constexpr int kRoot = 1;
  constexpr std::size_t kCount = 1000;
  const std::size_t elem = dataTypeSize(dtype);
  Config config;
  config.memory.pool_bytes = std::size_t{8} << 20;
  config.scratch_bytes = std::size_t{1} << 20;
  auto cluster = sim::SimCluster::create(kRanks, {}, config);
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  const std::size_t bytes = reportedBytes(collective, kCount, kRanks, elem);
  std::vector<std::vector<unsigned char>> allocations(2 * kRanks, std::vector<unsigned char>(bytes, 0xff));
  auto base = [&](int rank, Allocation a) {
    return allocations[static_cast<std::size_t>(2 * rank + (a == Allocation::kRecv ? 1 : 0))].data();
  };
  auto receive = [&](int rank) {
    const Placement p = placementOf(collective, in_place, rank, kRanks, kCount, elem);
    const unsigned char* at = base(rank, p.recv_in) + p.recv_offset;
    return std::vector<unsigned char>(at, at + p.recv_elems * elem);
  };
  for (int r = 0; r < kRanks; ++r) {
    const Placement p = placementOf(collective, in_place, r, kRanks, kCount, elem);
    if (!readsInput(collective, r, kRoot)) continue;
    const auto input = encodeInput(dtype, r, kRanks, p.send_elems);
    std::memcpy(base(r, p.send_in) + p.send_offset, input.data(), input.size());
  }
  long long before = 0;
  for (int r = 0; r < kRanks; ++r) before += countWrong(receive(r), dtype, collective, r, kRanks, kRoot, kCount);
  EXPECT_GT(before, 0) << "a call that did not run must be caught";
  for (int r = 0; r < kRanks; ++r) {
    const Placement p = placementOf(collective, in_place, r, kRanks, kCount, elem);
    ASSERT_TRUE(callCollective((*cluster)->comm(r), collective, kRoot, base(r, p.send_in) + p.send_offset,
                               base(r, p.recv_in) + p.recv_offset, kCount, dtype, nullptr)
                    .isOk());
  }
  ASSERT_TRUE((*cluster)->runUntilIdle().isOk());
  for (int r = 0; r < kRanks; ++r) {
    auto received = receive(r);
    EXPECT_EQ(countWrong(received, dtype, collective, r, kRanks, kRoot, kCount), 0) << "rank " << r;
    received[received.size() / 2] ^= 0x40;  // an exponent bit: a different value, never the same one
    EXPECT_EQ(countWrong(received, dtype, collective, r, kRanks, kRoot, kCount), 1) << "rank " << r;
    received.resize(received.size() - 2 * elem);
    EXPECT_EQ(countWrong(received, dtype, collective, r, kRanks, kRoot, kCount), 3) << "a short download";
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCollective, SimulatedCheck,
                         ::testing::Combine(::testing::ValuesIn(kEvery), ::testing::Bool(),
                                            ::testing::Values(DataType::kFloat32, DataType::kFloat16,
                                                              DataType::kBFloat16, DataType::kFloat8E4M3,
                                                              DataType::kFloat8E5M2)));

// fp16 inputs are IEEE half bits of whole numbers (-4 .. 4): the first two elements of rank 0 are -4 and 3.
TEST(CollectiveUnits, Float16InputsAreHalfBits) {
  const auto input = encodeInput(DataType::kFloat16, 0, 4, 3);
  ASSERT_EQ(input.size(), 6u);
  std::uint16_t first = 0, second = 0;
  std::memcpy(&first, input.data(), 2);
  std::memcpy(&second, input.data() + 2, 2);
  EXPECT_EQ(first, 0xc400);   // -4: sign, exponent 2 + 15, no mantissa
  EXPECT_EQ(second, 0x4200);  // 3: exponent 1 + 15, mantissa .5
  EXPECT_FALSE(benchmarkedType(DataType::kInt32));
  EXPECT_TRUE(benchmarkedType(DataType::kFloat16));
}

TEST(CollectiveCall, AnUnknownCollectiveIsATypedError) {
  Config config;
  config.memory.pool_bytes = std::size_t{4} << 20;
  config.scratch_bytes = std::size_t{1} << 20;
  auto cluster = sim::SimCluster::create(2, {}, config);
  ASSERT_TRUE(cluster.isOk());
  float buffer[4] = {};
  const Status s = callCollective((*cluster)->comm(0), static_cast<Collective>(9), 0, buffer, buffer, 4,
                                  DataType::kFloat32, nullptr);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown collective value 9"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace peerreduce::bench
