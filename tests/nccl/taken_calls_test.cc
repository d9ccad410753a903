// The calls peerreduce takes run on its side (here a simulated world) and give NCCL's results, checked
// against a host reference; the calls it does not take reach the real NCCL, row by row of the take table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "nccl_api_support.h"
#include "scoped_env.h"

namespace peerreduce::nccl::testing {
namespace {

using peerreduce::testing::ScopedEnv;

constexpr int kTakenCallsRanks = 4;

// Rank r's element i: small integers, so float sums and products are exact whatever the order.
float input(int rank, std::size_t i) { return static_cast<float>((rank * 7 + static_cast<int>(i)) % 11) - 5.0f; }

TEST(Api, TakenCollectivesGiveNcclResults) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(kTakenCallsRanks);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble::get().reset();
  constexpr std::size_t kCount = 1000;  // not a multiple of the world size, nor of 16 bytes
  std::vector<std::vector<float>> sum(kTakenCallsRanks), maxima(kTakenCallsRanks), minima(kTakenCallsRanks),
      in_place(kTakenCallsRanks);
  std::vector<std::vector<std::int32_t>> product(kTakenCallsRanks);
  std::vector<std::vector<float>> scattered(kTakenCallsRanks), gathered(kTakenCallsRanks), broadcast(kTakenCallsRanks);
  onRanks(kTakenCallsRanks, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    ncclComm_t comm = comms[r];
    std::vector<float> mine(kCount);
    for (std::size_t i = 0; i < kCount; ++i) mine[i] = input(rank, i);
    sum[r].assign(kCount, 0.0f);
    maxima[r].assign(kCount, 0.0f);
    minima[r].assign(kCount, 0.0f);
    EXPECT_EQ(ncclAllReduce(mine.data(), sum[r].data(), kCount, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess)
        << ncclGetLastError(comm);
    // NCCL numbers max before min; peerreduce the other way round: each must still mean itself.
    EXPECT_EQ(ncclAllReduce(mine.data(), maxima[r].data(), kCount, ncclFloat32, ncclMax, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(mine.data(), minima[r].data(), kCount, ncclFloat32, ncclMin, comm, nullptr), ncclSuccess);
    std::vector<std::int32_t> factors(kCount);
    for (std::size_t i = 0; i < kCount; ++i) factors[i] = static_cast<std::int32_t>((i + r) % 3) + 1;
    product[r].assign(kCount, 0);
    EXPECT_EQ(ncclAllReduce(factors.data(), product[r].data(), kCount, ncclInt32, ncclProd, comm, nullptr),
              ncclSuccess);
    in_place[r] = mine;
    EXPECT_EQ(ncclAllReduce(in_place[r].data(), in_place[r].data(), kCount, ncclFloat32, ncclSum, comm, nullptr),
              ncclSuccess);
    // Reduce-scatter: block b of every rank's input, summed, lands in rank b.
    std::vector<float> blocks(kCount * kTakenCallsRanks);
    for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = input(rank, i);
    scattered[r].assign(kCount, 0.0f);
    EXPECT_EQ(ncclReduceScatter(blocks.data(), scattered[r].data(), kCount, ncclFloat32, ncclSum, comm, nullptr),
              ncclSuccess);
    gathered[r].assign(kCount * kTakenCallsRanks, 0.0f);
    EXPECT_EQ(ncclAllGather(mine.data(), gathered[r].data(), kCount, ncclFloat32, comm, nullptr), ncclSuccess);
    broadcast[r] = rank == 2 ? mine : std::vector<float>(kCount, 0.0f);
    EXPECT_EQ(ncclBroadcast(broadcast[r].data(), broadcast[r].data(), kCount, ncclFloat32, 2, comm, nullptr),
              ncclSuccess);
  });
  for (int rank = 0; rank < kTakenCallsRanks; ++rank) {
    const auto r = static_cast<std::size_t>(rank);
    for (std::size_t i = 0; i < kCount; ++i) {
      float total = 0, high = input(0, i), low = input(0, i);
      std::int32_t multiplied = 1;
      for (int q = 0; q < kTakenCallsRanks; ++q) {
        total += input(q, i);
        high = std::max(high, input(q, i));
        low = std::min(low, input(q, i));
        multiplied *= static_cast<std::int32_t>((i + static_cast<std::size_t>(q)) % 3) + 1;
      }
      ASSERT_EQ(sum[r][i], total) << "rank " << rank << " element " << i;
      ASSERT_EQ(in_place[r][i], total) << "rank " << rank << " element " << i;
      ASSERT_EQ(maxima[r][i], high) << "rank " << rank << " element " << i;
      ASSERT_EQ(minima[r][i], low) << "rank " << rank << " element " << i;
      ASSERT_EQ(product[r][i], multiplied) << "rank " << rank << " element " << i;
      float block_total = 0;
      for (int q = 0; q < kTakenCallsRanks; ++q) block_total += input(q, r * kCount + i);
      ASSERT_EQ(scattered[r][i], block_total) << "rank " << rank << " element " << i;
      ASSERT_EQ(broadcast[r][i], input(2, i)) << "rank " << rank << " element " << i;
      for (int q = 0; q < kTakenCallsRanks; ++q) {
        ASSERT_EQ(gathered[r][static_cast<std::size_t>(q) * kCount + i], input(q, i))
            << "rank " << rank << " block " << q << " element " << i;
      }
    }
  }
  // Nothing of it reached the real NCCL.
  for (const char* function : {"ncclAllReduce", "ncclReduceScatter", "ncclAllGather", "ncclBroadcast"}) {
    EXPECT_TRUE(TestDouble::get().callsOf(function).empty()) << function << " was forwarded";
  }
  destroyComms(comms);
}

// The take setting is read when each communicator is made: one process holds a communicator that takes
// every call beside one that forwards every call, whatever the variable says later (the benchmarks compare
// the library with NCCL's own kernels inside one process so).
TEST(Api, EachCommunicatorKeepsTheTakeSettingItWasMadeWith) {
  std::vector<ncclComm_t> taking;
  std::vector<ncclComm_t> forwarding;
  {
    const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
    taking = makeComms(kTakenCallsRanks);
  }
  {
    const ScopedEnv none("PEERREDUCE_NCCL_TAKE", "none");
    forwarding = makeComms(kTakenCallsRanks);
  }
  ASSERT_FALSE(::testing::Test::HasFailure());
  for (const char* now : {"none", "all"}) {
    const ScopedEnv later("PEERREDUCE_NCCL_TAKE", now);
    expectTakenSums(taking);
    TestDouble::get().reset();
    onRanks(kTakenCallsRanks, [&](int rank) {
      std::vector<float> values(64, 1.0f);
      EXPECT_EQ(ncclAllReduce(values.data(), values.data(), values.size(), ncclFloat32, ncclSum,
                              forwarding[static_cast<std::size_t>(rank)], nullptr),
                ncclSuccess);
    });
    EXPECT_EQ(TestDouble::get().callsOf("ncclAllReduce").size(), static_cast<std::size_t>(kTakenCallsRanks))
        << "the communicator made with PEERREDUCE_NCCL_TAKE=none forwards every call (the variable now: " << now << ")";
  }
  destroyComms(taking);
  destroyComms(forwarding);
}

// A taken collective of no elements ends in the library: success, nothing forwarded, nothing touched;
// with its root out of range it goes on to peerreduce's checks and fails as NCCL's would.
TEST(Api, TakenCollectivesOfNoElementsEndWithoutWork) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(kTakenCallsRanks);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble::get().reset();
  std::vector<int> bad_root(kTakenCallsRanks, ncclSuccess);
  onRanks(kTakenCallsRanks, [&](int rank) {
    ncclComm_t comm = comms[static_cast<std::size_t>(rank)];
    float untouched[4] = {1, 2, 3, 4};
    EXPECT_EQ(ncclAllReduce(untouched, untouched, 0, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclReduceScatter(untouched, untouched, 0, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclAllGather(untouched, untouched, 0, ncclFloat32, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclBroadcast(untouched, untouched, 0, ncclFloat32, 1, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclGroupStart(), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(untouched, untouched, 0, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
    EXPECT_EQ(untouched[0] + untouched[1] + untouched[2] + untouched[3], 10.0f);
    bad_root[static_cast<std::size_t>(rank)] =
        ncclBroadcast(untouched, untouched, 0, ncclFloat32, kTakenCallsRanks, comm, nullptr);
  });
  for (const char* function : {"ncclAllReduce", "ncclReduceScatter", "ncclAllGather", "ncclBroadcast"}) {
    EXPECT_TRUE(TestDouble::get().callsOf(function).empty()) << function << " was forwarded";
  }
  for (int rank = 0; rank < kTakenCallsRanks; ++rank) {
    EXPECT_EQ(bad_root[static_cast<std::size_t>(rank)], ncclInvalidArgument) << "rank " << rank;
  }
  destroyComms(comms);
}

// A small integer (|value| <= 8) as the bits of an 8-bit float: e4m3 (bias 7, 3 mantissa bits) or e5m2 (bias
// 15, 2 mantissa bits); both hold every integer up to 8 exactly.
std::uint8_t smallIntegerAsFp8(int value, bool e4m3) {
  if (value == 0) return 0;
  const int mantissa_bits = e4m3 ? 3 : 2;
  const int bias = e4m3 ? 7 : 15;
  const int magnitude = value < 0 ? -value : value;
  int exponent = 0;
  while ((2 << exponent) <= magnitude) ++exponent;
  const int mantissa = ((magnitude - (1 << exponent)) << mantissa_bits) >> exponent;  // exact: |value| <= 8
  return static_cast<std::uint8_t>((value < 0 ? 0x80 : 0) | ((exponent + bias) << mantissa_bits) | mantissa);
}

// ncclFloat8e4m3 and ncclFloat8e5m2 are taken and reduced by peerreduce: values whose every partial sum is a
// small integer, so every fold order gives the exact bits; nothing reaches the real NCCL.
TEST(Api, Fp8CollectivesAreTakenWithExactResults) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  auto comms = makeComms(kTakenCallsRanks);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble::get().reset();
  constexpr std::size_t kCount = 1001;
  // Rank r's element i: -1, 0, 1 or 2; sums over four ranks lie in [-4, 8].
  const auto value = [](int rank, std::size_t i) {
    return static_cast<int>((static_cast<std::size_t>(rank) + i) % 4) - 1;
  };
  for (const ncclDataType_t type : {ncclFloat8e4m3, ncclFloat8e5m2}) {
    const bool e4m3 = type == ncclFloat8e4m3;
    std::vector<std::vector<std::uint8_t>> sums(kTakenCallsRanks), maxima(kTakenCallsRanks);
    onRanks(kTakenCallsRanks, [&](int rank) {
      const auto r = static_cast<std::size_t>(rank);
      std::vector<std::uint8_t> mine(kCount);
      for (std::size_t i = 0; i < kCount; ++i) mine[i] = smallIntegerAsFp8(value(rank, i), e4m3);
      sums[r].assign(kCount, 0xaa);
      maxima[r].assign(kCount, 0xaa);
      EXPECT_EQ(ncclAllReduce(mine.data(), sums[r].data(), kCount, type, ncclSum, comms[r], nullptr), ncclSuccess)
          << ncclGetLastError(comms[r]);
      EXPECT_EQ(ncclAllReduce(mine.data(), maxima[r].data(), kCount, type, ncclMax, comms[r], nullptr), ncclSuccess);
    });
    for (int rank = 0; rank < kTakenCallsRanks; ++rank) {
      for (std::size_t i = 0; i < kCount; ++i) {
        int total = 0;
        int high = value(0, i);
        for (int q = 0; q < kTakenCallsRanks; ++q) {
          total += value(q, i);
          high = std::max(high, value(q, i));
        }
        const auto r = static_cast<std::size_t>(rank);
        ASSERT_EQ(sums[r][i], smallIntegerAsFp8(total, e4m3)) << (e4m3 ? "e4m3" : "e5m2") << " element " << i;
        ASSERT_EQ(maxima[r][i], smallIntegerAsFp8(high, e4m3)) << (e4m3 ? "e4m3" : "e5m2") << " element " << i;
      }
    }
  }
  EXPECT_TRUE(TestDouble::get().callsOf("ncclAllReduce").empty()) << "an 8-bit float allreduce was forwarded";
  destroyComms(comms);
}

// A take table for the simulated 4-rank world, in a file of its own for PEERREDUCE_NCCL_TAKE_TABLE.
class TableFile {
 public:
  explicit TableFile(const std::string& rows)
      : path_((std::filesystem::temp_directory_path() /
               ("peerreduce_nccl_take_" + std::to_string(::getpid()) + "_" + std::to_string(next_++) + ".txt"))
                  .string()) {
    std::ofstream(path_) << "peerreduce-nccl-take 1\n" << rows;
  }
  ~TableFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int next_ = 0;
  std::string path_;
};

// The take policy, end to end: in auto mode with a take table (and a 4 KiB cap) what is small, measured
// faster and peerreduce's is taken, and every other row reaches the real NCCL, on every rank.
TEST(Api, AutoModeTakesOnlyWhatTheTableTakes) {
  const ScopedEnv automatic("PEERREDUCE_NCCL_TAKE", "auto");
  const ScopedEnv limit("PEERREDUCE_NCCL_MAX_BYTES", "4K");
  const TableFile table(
      "entry allreduce simulator 4 any 0 1M peerreduce\n"
      "entry all-gather simulator 4 any 0 1K nccl\n"
      "entry broadcast simulator 4 int32 0 1K peerreduce\n");
  const ScopedEnv rows("PEERREDUCE_NCCL_TAKE_TABLE", table.path());
  auto comms = makeComms(kTakenCallsRanks);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  real.reset();
  std::vector<std::vector<float>> small(kTakenCallsRanks);
  onRanks(kTakenCallsRanks, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    ncclComm_t comm = comms[r];
    std::vector<float> mine(2048, 1.0f);
    small[r].assign(256, 0.0f);
    // 1 KiB allreduce: taken.
    EXPECT_EQ(ncclAllReduce(mine.data(), small[r].data(), 256, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
    std::vector<float> out(2048 * kTakenCallsRanks, 0.0f);
    // 8 KiB allreduce: the table would take it, the cap does not.
    EXPECT_EQ(ncclAllReduce(mine.data(), out.data(), 2048, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
    // avg: taken like sum (the table's allreduce row takes 64 B).
    EXPECT_EQ(ncclAllReduce(mine.data(), out.data(), 16, ncclFloat32, ncclAvg, comm, nullptr), ncclSuccess);
    // An all-gather's size is its whole output: 4 x 64 floats = 1 KiB, measured NCCL's.
    EXPECT_EQ(ncclAllGather(mine.data(), out.data(), 64, ncclFloat32, comm, nullptr), ncclSuccess);
    // A reduce-scatter (of 8-bit floats, which peerreduce has too): the table has no rows for it, forwarded.
    EXPECT_EQ(ncclReduceScatter(mine.data(), out.data(), 16, ncclFloat8e4m3, ncclSum, comm, nullptr), ncclSuccess);
    // A created operator only NCCL knows.
    float scalar = 2.0f;
    ncclRedOp_t premul = ncclSum;
    EXPECT_EQ(ncclRedOpCreatePreMulSum(&premul, &scalar, ncclFloat32, ncclScalarHostImmediate, comm), ncclSuccess);
    EXPECT_EQ(ncclAllReduce(mine.data(), out.data(), 16, ncclFloat32, premul, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclRedOpDestroy(premul, comm), ncclSuccess);
    // Collectives peerreduce does not have.
    EXPECT_EQ(ncclReduce(mine.data(), out.data(), 16, ncclFloat32, ncclSum, 0, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclSend(mine.data(), 16, ncclFloat32, (rank + 1) % kTakenCallsRanks, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclRecv(out.data(), 16, ncclFloat32, (rank + kTakenCallsRanks - 1) % kTakenCallsRanks, comm, nullptr),
              ncclSuccess);
    // A small broadcast of int32: taken; of fp32, whose class has no rows: forwarded; of int32 beyond the
    // rows (2 KiB): forwarded.
    EXPECT_EQ(ncclBroadcast(mine.data(), out.data(), 64, ncclInt32, 1, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclBroadcast(mine.data(), out.data(), 64, ncclFloat32, 1, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclBroadcast(mine.data(), out.data(), 512, ncclInt32, 1, comm, nullptr), ncclSuccess);
  });
  for (int rank = 0; rank < kTakenCallsRanks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const auto forwarded = real.callsOf("ncclAllReduce", rank);
    ASSERT_EQ(forwarded.size(), 2u);
    EXPECT_EQ(forwarded[0].args[2], 2048u);
    EXPECT_GE(forwarded[1].args[4], static_cast<std::uint64_t>(ncclNumOps));
    EXPECT_EQ(real.callsOf("ncclAllGather", rank).size(), 1u);
    EXPECT_EQ(real.callsOf("ncclReduceScatter", rank).size(), 1u);
    EXPECT_EQ(real.callsOf("ncclReduce", rank).size(), 1u);
    EXPECT_EQ(real.callsOf("ncclSend", rank).size(), 1u);
    EXPECT_EQ(real.callsOf("ncclRecv", rank).size(), 1u);
    const auto broadcasts = real.callsOf("ncclBroadcast", rank);
    ASSERT_EQ(broadcasts.size(), 2u);
    EXPECT_EQ(broadcasts[0].args[3], static_cast<std::uint64_t>(ncclFloat32));
    EXPECT_EQ(broadcasts[1].args[2], 512u);
    EXPECT_EQ(small[static_cast<std::size_t>(rank)][0], static_cast<float>(kTakenCallsRanks))
        << "the taken allreduce's result";
  }
  destroyComms(comms);
}

// The built-in table has no rows for the simulator: unmeasured, so auto mode takes allreduces up to
// 256 KiB and forwards everything else, even the smallest reduce-scatter, all-gather and broadcast.
TEST(Api, AutoModeWithoutMeasurementsTakesOnlySmallAllreduces) {
  const ScopedEnv automatic("PEERREDUCE_NCCL_TAKE", "auto");
  const ScopedEnv builtin("PEERREDUCE_NCCL_TAKE_TABLE", std::nullopt);
  auto comms = makeComms(kTakenCallsRanks);
  ASSERT_FALSE(::testing::Test::HasFailure());
  TestDouble& real = TestDouble::get();
  real.reset();
  constexpr std::size_t kLargest = 64 * 1024;  // floats: 256 KiB
  std::vector<std::vector<float>> largest(kTakenCallsRanks);
  onRanks(kTakenCallsRanks, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    ncclComm_t comm = comms[r];
    std::vector<float> mine(kLargest + 1, 1.0f);
    largest[r].assign(kLargest + 1, 0.0f);
    EXPECT_EQ(ncclAllReduce(mine.data(), largest[r].data(), kLargest, ncclFloat32, ncclSum, comm, nullptr),
              ncclSuccess);
    EXPECT_EQ(ncclAllReduce(mine.data(), largest[r].data(), kLargest + 1, ncclFloat32, ncclSum, comm, nullptr),
              ncclSuccess);
    std::vector<float> out(16 * kTakenCallsRanks, 0.0f);
    EXPECT_EQ(ncclReduceScatter(out.data(), mine.data(), 16, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclAllGather(mine.data(), out.data(), 16, ncclFloat32, comm, nullptr), ncclSuccess);
    EXPECT_EQ(ncclBroadcast(mine.data(), out.data(), 16, ncclFloat32, 0, comm, nullptr), ncclSuccess);
  });
  for (int rank = 0; rank < kTakenCallsRanks; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const auto allreduces = real.callsOf("ncclAllReduce", rank);
    ASSERT_EQ(allreduces.size(), 1u);
    EXPECT_EQ(allreduces[0].args[2], kLargest + 1) << "only the one above 256 KiB";
    EXPECT_EQ(real.callsOf("ncclReduceScatter", rank).size(), 1u);
    EXPECT_EQ(real.callsOf("ncclAllGather", rank).size(), 1u);
    EXPECT_EQ(real.callsOf("ncclBroadcast", rank).size(), 1u);
    EXPECT_EQ(largest[static_cast<std::size_t>(rank)][0], static_cast<float>(kTakenCallsRanks))
        << "the taken allreduce";
  }
  destroyComms(comms);
}

// A take table that does not parse fails the creation on every rank with ncclInvalidArgument, the message
// naming the file, the setting and the line; nothing is left behind.
TEST(Api, MalformedTakeTableFailsCreation) {
  const ScopedEnv automatic("PEERREDUCE_NCCL_TAKE", "auto");
  const TableFile table("entry allreduce simulator 2 fp32 0 1M quickest\n");
  const ScopedEnv rows("PEERREDUCE_NCCL_TAKE_TABLE", table.path());
  ncclUniqueId id{};
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<ncclComm_t> comms(2, nullptr);
  std::vector<ncclResult_t> results(2, ncclSuccess);
  std::vector<std::string> messages(2);
  onRanks(2, [&](int rank) {
    const auto r = static_cast<std::size_t>(rank);
    results[r] = ncclCommInitRank(&comms[r], 2, id, rank);
    messages[r] = ncclGetLastError(nullptr);
  });
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r], ncclInvalidArgument) << messages[r];
    EXPECT_NE(messages[r].find("PEERREDUCE_NCCL_TAKE_TABLE"), std::string::npos) << messages[r];
    EXPECT_NE(messages[r].find(table.path()), std::string::npos) << messages[r];
    EXPECT_NE(messages[r].find("line 2: unknown choice 'quickest'"), std::string::npos) << messages[r];
  }
  // The real communicators were ended: the double counts one abort per rank.
  EXPECT_EQ(TestDouble::get().callsOf("ncclCommAbort").size(), 2u);
}

// A world with host-staged pairs (here every link, by PEERREDUCE_LINK_MASK) looks up the rows of its architecture
// with "-host": the rows measured over direct links do not decide for it, on every rank.
TEST(Api, HostStagedWorldsTakeByTheirOwnRows) {
  const ScopedEnv automatic("PEERREDUCE_NCCL_TAKE", "auto");
  const TableFile table(
      "entry allreduce simulator 4 any 0 1M nccl\n"
      "entry allreduce simulator-host 4 any 0 1M peerreduce\n");
  const ScopedEnv rows("PEERREDUCE_NCCL_TAKE_TABLE", table.path());
  TestDouble& real = TestDouble::get();
  for (const bool host_staged : {false, true}) {
    SCOPED_TRACE(host_staged ? "PEERREDUCE_LINK_MASK=host:all" : "direct links");
    const ScopedEnv mask("PEERREDUCE_LINK_MASK",
                         host_staged ? std::optional<std::string>("host:all") : std::optional<std::string>());
    auto comms = makeComms(kTakenCallsRanks);
    ASSERT_FALSE(::testing::Test::HasFailure());
    real.reset();
    std::vector<std::vector<float>> sums(kTakenCallsRanks);
    onRanks(kTakenCallsRanks, [&](int rank) {
      const auto r = static_cast<std::size_t>(rank);
      std::vector<float> mine(256, static_cast<float>(rank + 1));
      sums[r].assign(256, 0.0f);
      EXPECT_EQ(ncclAllReduce(mine.data(), sums[r].data(), 256, ncclFloat32, ncclSum, comms[r], nullptr), ncclSuccess)
          << ncclGetLastError(comms[r]);
    });
    for (int rank = 0; rank < kTakenCallsRanks; ++rank) {
      EXPECT_EQ(real.callsOf("ncclAllReduce", rank).size(), host_staged ? 0u : 1u) << "rank " << rank;
      if (host_staged) {
        // Taken: peerreduce's sum over host-staged links, 1 + 2 + 3 + 4.
        EXPECT_EQ(sums[static_cast<std::size_t>(rank)][255], 10.0f) << "rank " << rank;
      }
    }
    destroyComms(comms);
  }
}

// avg is taken by default (PEERREDUCE_NCCL_TAKE_AVG unset, or 1) and gives NCCL's average (floating inputs
// premultiplied by 1/nranks, exact here with 4 ranks; integer sums divided, truncated toward zero: -7 / 4 is
// -1); with PEERREDUCE_NCCL_TAKE_AVG=0, avg reaches the real NCCL.
TEST(Api, AvgIsTakenUnlessSwitchedOff) {
  const ScopedEnv all("PEERREDUCE_NCCL_TAKE", "all");
  TestDouble& real = TestDouble::get();
  for (const std::optional<std::string>& setting :
       {std::optional<std::string>(), std::optional<std::string>("1"), std::optional<std::string>("0")}) {
    SCOPED_TRACE("PEERREDUCE_NCCL_TAKE_AVG=" + setting.value_or("(unset)"));
    const bool switched_on = setting != "0";
    const ScopedEnv take_avg("PEERREDUCE_NCCL_TAKE_AVG", setting);
    auto comms = makeComms(kTakenCallsRanks);
    ASSERT_FALSE(::testing::Test::HasFailure());
    real.reset();
    constexpr std::size_t kCount = 100;
    std::vector<std::vector<float>> floats(kTakenCallsRanks);
    std::vector<std::vector<std::int32_t>> integers(kTakenCallsRanks), scattered(kTakenCallsRanks);
    onRanks(kTakenCallsRanks, [&](int rank) {
      const auto r = static_cast<std::size_t>(rank);
      std::vector<float> mine(kCount);
      for (std::size_t i = 0; i < kCount; ++i) mine[i] = input(rank, i);
      floats[r].assign(kCount, 0.0f);
      EXPECT_EQ(ncclAllReduce(mine.data(), floats[r].data(), kCount, ncclFloat32, ncclAvg, comms[r], nullptr),
                ncclSuccess)
          << ncclGetLastError(comms[r]);
      // Rank 0 gives -4, the others -1: the sum is -7.
      integers[r].assign(kCount, rank == 0 ? -4 : -1);
      EXPECT_EQ(ncclAllReduce(integers[r].data(), integers[r].data(), kCount, ncclInt32, ncclAvg, comms[r], nullptr),
                ncclSuccess);
      std::vector<std::int32_t> blocks(kCount * kTakenCallsRanks, rank == 0 ? 9 : 1);
      scattered[r].assign(kCount, 0);
      EXPECT_EQ(ncclReduceScatter(blocks.data(), scattered[r].data(), kCount, ncclInt32, ncclAvg, comms[r], nullptr),
                ncclSuccess);
    });
    if (!switched_on) {
      for (int rank = 0; rank < kTakenCallsRanks; ++rank) {
        EXPECT_EQ(real.callsOf("ncclAllReduce", rank).size(), 2u);
        EXPECT_EQ(real.callsOf("ncclReduceScatter", rank).size(), 1u);
      }
      destroyComms(comms);
      continue;
    }
    EXPECT_TRUE(real.callsOf("ncclAllReduce").empty());
    EXPECT_TRUE(real.callsOf("ncclReduceScatter").empty());
    for (std::size_t r = 0; r < kTakenCallsRanks; ++r) {
      for (std::size_t i = 0; i < kCount; ++i) {
        float expected = 0;
        for (int q = 0; q < kTakenCallsRanks; ++q) expected += input(q, i) * 0.25f;
        ASSERT_EQ(floats[r][i], expected) << "rank " << r << " element " << i;
        ASSERT_EQ(integers[r][i], -1) << "rank " << r << " element " << i;
        ASSERT_EQ(scattered[r][i], 3) << "rank " << r << " element " << i;  // (9 + 1 + 1 + 1) / 4
      }
    }
    destroyComms(comms);
  }
}

}  // namespace
}  // namespace peerreduce::nccl::testing
