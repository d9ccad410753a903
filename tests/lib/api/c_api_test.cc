// The C API through its public header only: results on simulated worlds, every rejected argument
// (right code, a message naming the problem, buffers untouched), the per-thread last error, names.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "peerreduce/gpu.h"
#include "peerreduce/peerreduce_sim.h"
#include "peerreduce/status.h"
#include "scoped_env.h"
#include "text_contains.h"

extern "C" int runCHeaderChecks(void);

namespace {

// A value no allreduce of the test payloads can produce, to see whether a buffer was written.
constexpr float kSentinelFloat = -12345.25f;
constexpr std::uint16_t kSentinelBf16 = 0x7bad;

using peerreduce::testing::ScopedEnv;

using peerreduce::testing::contains;

// bf16 is the top half of an fp32. Encoding rounds to nearest, ties to even (finite inputs only), as
// the library's stores do; written here independently of kernels/float16.h.
std::uint16_t toBf16(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  const std::uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<std::uint16_t>((bits + 0x7fffu + lsb) >> 16);
}

float fromBf16(std::uint16_t value) {
  const std::uint32_t bits = static_cast<std::uint32_t>(value) << 16;
  float out = 0.0f;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

// Payloads. The floating ones are small integers and halves, so that every partial sum is exact in
// fp32 and bf16 whatever order the plan reduces in, and the expected value is unambiguous.
float fp32Input(int rank, std::size_t i) {
  return static_cast<float>((rank + 1) * (static_cast<int>(i % 13) - 6)) + (rank % 2 == 0 ? 0.5f : -0.25f);
}
std::int32_t int32Input(int rank, std::size_t i) {
  // Full-range bits, so max is tested on negatives and large values, not just small ones.
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(i) * 2654435761u ^
                                   static_cast<std::uint32_t>(rank + 1) * 40503u * 977u);
}
float bf16InputValue(int rank, std::size_t i) {
  return static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(rank) * 3) % 17) - 8);
}

// Makes a world of `nranks` and every rank's communicator through the C API; one thread drives all.
struct SimWorldFixture {
  prSimWorld_t world = nullptr;
  std::vector<prComm_t> comms;

  explicit SimWorldFixture(int nranks, const prConfig_t* config = nullptr) {
    EXPECT_EQ(prSimWorldCreate(nranks, 11, &world), prSuccess) << prGetLastError();
    comms.assign(static_cast<std::size_t>(nranks), nullptr);
    if (world != nullptr) {
      EXPECT_EQ(prCommInitSimAll(world, config, comms.data()), prSuccess) << prGetLastError();
    }
  }
  ~SimWorldFixture() {
    for (prComm_t comm : comms) {
      if (comm != nullptr) {
        EXPECT_EQ(prCommDestroy(comm), prSuccess) << prGetLastError();
      }
    }
    if (world != nullptr) {
      EXPECT_EQ(prSimWorldDestroy(world), prSuccess) << prGetLastError();
    }
  }
  bool ready() const {
    return world != nullptr && std::all_of(comms.begin(), comms.end(), [](prComm_t c) { return c; });
  }
  int size() const { return static_cast<int>(comms.size()); }
};

// Runs one allreduce on every rank (rank r's input from `input(r, i)`) and checks every rank's output
// against `expected(i)` bit for bit.
template <typename T, typename Input, typename Expected>
void checkAllreduce(SimWorldFixture& fixture, prDataType_t dtype, prRedOp_t op, bool in_place, std::size_t count,
                    Input input, Expected expected) {
  SCOPED_TRACE(::testing::Message() << "ranks " << fixture.size() << ", dtype " << dtype << ", op " << op
                                    << (in_place ? ", in place" : ", out of place") << ", count " << count);
  const auto n = static_cast<std::size_t>(fixture.size());
  std::vector<std::vector<T>> send(n, std::vector<T>(count));
  std::vector<std::vector<T>> recv(n, std::vector<T>(count));
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < count; ++i) send[r][i] = input(static_cast<int>(r), i);
  }
  for (std::size_t r = 0; r < n; ++r) {
    void* out = in_place ? static_cast<void*>(send[r].data()) : static_cast<void*>(recv[r].data());
    ASSERT_EQ(prAllReduce(send[r].data(), out, count, dtype, op, fixture.comms[r], nullptr), prSuccess)
        << prGetLastError();
  }
  ASSERT_EQ(prSimWorldRun(fixture.world), prSuccess) << prGetLastError();
  for (std::size_t r = 0; r < n; ++r) {
    ASSERT_EQ(prCommGetAsyncError(fixture.comms[r]), prSuccess) << prGetLastError();
    const std::vector<T>& out = in_place ? send[r] : recv[r];
    for (std::size_t i = 0; i < count; ++i) {
      const T want = expected(i);
      ASSERT_EQ(std::memcmp(&out[i], &want, sizeof(T)), 0) << "rank " << r << " element " << i;
    }
  }
}

// e4m3 bits of the integers 0..8 (bias 7, 3 mantissa bits): every sum of up to eight zeros and ones, and
// every partial sum of one, is exact, so any fold order gives these bits.
constexpr std::uint8_t kE4M3Integers[] = {0x00, 0x38, 0x40, 0x44, 0x48, 0x4a, 0x4c, 0x4e, 0x50};
// e5m2's (bias 15, 2 mantissa bits), 0..8, also exact.
constexpr std::uint8_t kE5M2Integers[] = {0x00, 0x3c, 0x40, 0x42, 0x44, 0x45, 0x46, 0x47, 0x48};

int zeroOrOne(int rank, std::size_t i) { return static_cast<int>((static_cast<std::size_t>(rank) + i) % 2); }

class CApiEndToEnd : public ::testing::TestWithParam<int> {};

TEST_P(CApiEndToEnd, AllreduceMatchesValuesComputedHereForEveryDtypeOpAndPlacement) {
  const int nranks = GetParam();
  SimWorldFixture fixture(nranks);
  ASSERT_TRUE(fixture.ready());
  for (int r = 0; r < nranks; ++r) {
    int rank = -1;
    int size = -1;
    ASSERT_EQ(prCommRank(fixture.comms[static_cast<std::size_t>(r)], &rank), prSuccess);
    ASSERT_EQ(prCommSize(fixture.comms[static_cast<std::size_t>(r)], &size), prSuccess);
    EXPECT_EQ(rank, r);
    EXPECT_EQ(size, nranks);
    int device = 99;
    ASSERT_EQ(prCommDevice(fixture.comms[static_cast<std::size_t>(r)], &device), prSuccess);
    EXPECT_EQ(device, -1) << "a simulated rank drives no GPU";
  }
  // 1, a prime and a size that splits unevenly over every world size here.
  for (std::size_t count : {std::size_t{1}, std::size_t{37}, std::size_t{1000}}) {
    for (bool in_place : {false, true}) {
      checkAllreduce<float>(fixture, prFloat32, prSum, in_place, count, fp32Input, [&](std::size_t i) {
        float sum = 0.0f;
        for (int r = 0; r < nranks; ++r) sum += fp32Input(r, i);
        return sum;
      });
      checkAllreduce<std::int32_t>(fixture, prInt32, prMax, in_place, count, int32Input, [&](std::size_t i) {
        std::int32_t best = INT32_MIN;
        for (int r = 0; r < nranks; ++r) best = std::max(best, int32Input(r, i));
        return best;
      });
      checkAllreduce<std::uint16_t>(
          fixture, prBFloat16, prAvg, in_place, count,
          [](int r, std::size_t i) { return toBf16(bf16InputValue(r, i)); },
          [&](std::size_t i) {
            // NCCL's average: every input times 1/n (1/n in double, to fp32, to bf16), each product rounded
            // to bf16, the terms summed in fp32 in rank order and rounded once; no division.
            const float reciprocal = fromBf16(toBf16(static_cast<float>(1.0 / nranks)));
            float sum = 0.0f;
            for (int r = 0; r < nranks; ++r)
              sum += fromBf16(toBf16(fromBf16(toBf16(bf16InputValue(r, i))) * reciprocal));
            return toBf16(sum);
          });
      // The 8-bit floats (prFloat8e4m3, prFloat8e5m2): sums of zeros and ones, exact in any order.
      const auto ones = [&](std::size_t i) {
        int sum = 0;
        for (int r = 0; r < nranks; ++r) sum += zeroOrOne(r, i);
        return sum;
      };
      checkAllreduce<std::uint8_t>(
          fixture, prFloat8e4m3, prSum, in_place, count,
          [](int r, std::size_t i) { return kE4M3Integers[zeroOrOne(r, i)]; },
          [&](std::size_t i) { return kE4M3Integers[ones(i)]; });
      checkAllreduce<std::uint8_t>(
          fixture, prFloat8e5m2, prMax, in_place, count,
          [](int r, std::size_t i) { return kE5M2Integers[zeroOrOne(r, i)]; },
          [&](std::size_t i) { return kE5M2Integers[ones(i) > 0 ? 1 : 0]; });
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, CApiEndToEnd, ::testing::Values(1, 2, 3, 5, 8));

TEST(CApi, OneThreadPerRankWithInitSimRankAndSynchronize) {
  constexpr int kRanks = 4;
  constexpr std::size_t kCount = 513;
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(kRanks, 5, &world), prSuccess) << prGetLastError();
  std::vector<std::vector<float>> data(kRanks, std::vector<float>(kCount));
  std::vector<prResult_t> results(kRanks, prInternalError);
  std::vector<std::string> messages(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      const auto i = static_cast<std::size_t>(r);
      for (std::size_t k = 0; k < kCount; ++k) data[i][k] = fp32Input(r, k);
      prComm_t comm = nullptr;
      prResult_t result = prCommInitSimRank(world, r, nullptr, &comm);
      if (result == prSuccess)
        result = prAllReduce(data[i].data(), data[i].data(), kCount, prFloat32, prSum, comm, nullptr);
      if (result == prSuccess) result = prCommSynchronize(comm, nullptr);
      if (result != prSuccess) messages[i] = prGetLastError();
      if (comm != nullptr && prCommDestroy(comm) != prSuccess && result == prSuccess) result = prInternalError;
      results[i] = result;
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    ASSERT_EQ(results[i], prSuccess) << "rank " << r << ": " << messages[i];
    for (std::size_t k = 0; k < kCount; ++k) {
      float sum = 0.0f;
      for (int q = 0; q < kRanks; ++q) sum += fp32Input(q, k);
      ASSERT_EQ(data[i][k], sum) << "rank " << r << " element " << k;
    }
  }
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess);
}

TEST(CApi, CountZeroSucceedsAndWritesNothing) {
  SimWorldFixture fixture(2);
  ASSERT_TRUE(fixture.ready());
  std::vector<float> send(8, 1.0f);
  std::vector<float> recv(8, kSentinelFloat);
  for (prComm_t comm : fixture.comms) {
    EXPECT_EQ(prAllReduce(send.data(), recv.data(), 0, prFloat32, prSum, comm, nullptr), prSuccess);
    EXPECT_EQ(prAllReduce(nullptr, nullptr, 0, prFloat32, prSum, comm, nullptr), prSuccess);
  }
  ASSERT_EQ(prSimWorldRun(fixture.world), prSuccess) << prGetLastError();
  EXPECT_EQ(recv, std::vector<float>(8, kSentinelFloat));
  EXPECT_EQ(send, std::vector<float>(8, 1.0f));
}

TEST(CApi, ConfigInitGivesDefaultsAndAppliesEnvironment) {
  ScopedEnv algo("PEERREDUCE_ALGO", std::nullopt);
  ScopedEnv timeout("PEERREDUCE_TIMEOUT_MS", std::nullopt);
  ScopedEnv scratch("PEERREDUCE_SCRATCH_BYTES", std::nullopt);
  ScopedEnv verify("PEERREDUCE_VERIFY_PLANS", std::nullopt);
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  EXPECT_EQ(config.algorithm, prAlgoAuto);
  EXPECT_EQ(config.timeout_ms, 30000);
  EXPECT_EQ(config.scratch_bytes, std::size_t{32} << 20);
  EXPECT_EQ(config.verify_plans, 1);

  ScopedEnv ring("PEERREDUCE_ALGO", "ring");
  ScopedEnv ms("PEERREDUCE_TIMEOUT_MS", "1234");
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  EXPECT_EQ(config.algorithm, prAlgoRing);
  EXPECT_EQ(config.timeout_ms, 1234);
}

TEST(CApi, ConfigInitWithMalformedEnvironmentFailsAndLeavesConfigUnchanged) {
  ScopedEnv timeout("PEERREDUCE_TIMEOUT_MS", "soon");
  prConfig_t config{};
  config.timeout_ms = 777;
  EXPECT_EQ(prConfigInit(&config), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "PEERREDUCE_TIMEOUT_MS")) << prGetLastError();
  EXPECT_EQ(config.timeout_ms, 777);
}

TEST(CApi, ConfiguredAlgorithmIsUsedAndGivesTheSameResult) {
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  // Every algorithm a configuration may force: a plan file (prAlgoUser) runs by its size range instead.
  for (int algorithm = prAlgoOneShot; algorithm < prAlgoUser; ++algorithm) {
    SCOPED_TRACE(algorithm);
    config.algorithm = algorithm;
    SimWorldFixture fixture(4, &config);
    ASSERT_TRUE(fixture.ready());
    checkAllreduce<float>(fixture, prFloat32, prSum, false, 301, fp32Input, [](std::size_t i) {
      float sum = 0.0f;
      for (int r = 0; r < 4; ++r) sum += fp32Input(r, i);
      return sum;
    });
  }
}

// ---- Errors ----------------------------------------------------------------------------------------

void expectRejected(prResult_t got, prResult_t want, const char* keyword) {
  EXPECT_EQ(got, want) << "got " << prGetErrorString(got) << ": " << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), keyword)) << "'" << keyword << "' not in: " << prGetLastError();
}

TEST(CApiErrors, NullHandlesAndOutPointersAreRejectedByName) {
  SimWorldFixture fixture(2);
  ASSERT_TRUE(fixture.ready());
  prComm_t comm = fixture.comms[0];
  float buffer[4] = {1, 2, 3, 4};

  expectRejected(prConfigInit(nullptr), prInvalidArgument, "config");
  expectRejected(prSimWorldDestroy(nullptr), prInvalidArgument, "world");
  expectRejected(prSimWorldRun(nullptr), prInvalidArgument, "world");
  expectRejected(prSimWorldCreate(2, 1, nullptr), prInvalidArgument, "world");
  expectRejected(prCommInitSimAll(nullptr, nullptr, fixture.comms.data()), prInvalidArgument, "world");
  expectRejected(prCommInitSimAll(fixture.world, nullptr, nullptr), prInvalidArgument, "comms");
  expectRejected(prCommInitSimRank(fixture.world, 0, nullptr, nullptr), prInvalidArgument, "comm");

  prComm_t made = reinterpret_cast<prComm_t>(&buffer);  // must come back NULL
  expectRejected(prCommInitSimRank(nullptr, 0, nullptr, &made), prInvalidArgument, "world");
  EXPECT_EQ(made, nullptr);

  expectRejected(prAllReduce(buffer, buffer, 4, prFloat32, prSum, nullptr, nullptr), prInvalidArgument, "comm");
  expectRejected(prCommSynchronize(nullptr, nullptr), prInvalidArgument, "comm");
  expectRejected(prCommGetAsyncError(nullptr), prInvalidArgument, "comm");
  expectRejected(prCommDestroy(nullptr), prInvalidArgument, "comm");

  int value = -99;
  expectRejected(prCommRank(nullptr, &value), prInvalidArgument, "comm");
  expectRejected(prCommSize(nullptr, &value), prInvalidArgument, "comm");
  EXPECT_EQ(value, -99);
  expectRejected(prCommRank(comm, nullptr), prInvalidArgument, "rank");
  expectRejected(prCommSize(comm, nullptr), prInvalidArgument, "size");
  expectRejected(prCommDevice(nullptr, &value), prInvalidArgument, "comm");
  expectRejected(prCommDevice(comm, nullptr), prInvalidArgument, "device");
  EXPECT_EQ(prCommGetAsyncError(comm), prSuccess);
}

TEST(CApi, MemoryStatsDescribeTheSymmetricPoolOnEveryRank) {
  SimWorldFixture fixture(2);
  ASSERT_TRUE(fixture.ready());
  for (prComm_t comm : fixture.comms) {
    prMemoryStats_t stats;
    std::memset(&stats, 0xff, sizeof(stats));
    ASSERT_EQ(prCommMemoryStats(comm, &stats), prSuccess) << prGetLastError();
    // The default pool (128 MiB: every channel's scratch) holds the eager channel's scratch, taken at
    // creation in one allocation.
    EXPECT_EQ(stats.capacity_bytes, std::uint64_t{128} << 20);
    EXPECT_EQ(stats.quota_bytes, std::uint64_t{128} << 20);
    EXPECT_EQ(stats.bytes_in_use, std::uint64_t{32} << 20);
    EXPECT_EQ(stats.peak_bytes_in_use, std::uint64_t{32} << 20);
    EXPECT_EQ(stats.live_blocks, 1u);
    EXPECT_EQ(stats.allocations, 1u);
    EXPECT_EQ(stats.failed_allocations, 0u);
    EXPECT_EQ(stats.free_blocks, 1u);
    EXPECT_EQ(stats.largest_free_block_bytes, std::uint64_t{96} << 20);
    EXPECT_EQ(stats.fragmentation, 0.0);
    EXPECT_EQ(stats.defragmentations, 0u);
    EXPECT_EQ(stats.blocks_moved, 0u);
    EXPECT_EQ(stats.bytes_moved, 0u);
  }
  prMemoryStats_t untouched{};
  untouched.allocations = 77;
  expectRejected(prCommMemoryStats(nullptr, &untouched), prInvalidArgument, "comm");
  EXPECT_EQ(untouched.allocations, 77u);
  expectRejected(prCommMemoryStats(fixture.comms[0], nullptr), prInvalidArgument, "stats");
}

TEST(CApi, ProfilingCountsAndTimesEveryRanksOperations) {
  SimWorldFixture fixture(2);
  ASSERT_TRUE(fixture.ready());
  prProfileSummary_t untouched{};
  untouched.operations = 55;
  expectRejected(prCommProfileSummary(fixture.comms[0], &untouched), prUnavailable, "enableProfiling");
  EXPECT_EQ(untouched.operations, 55u);
  expectRejected(prCommEnableProfiling(fixture.comms[0], 0), prInvalidArgument, "capacity 0");
  for (prComm_t comm : fixture.comms) ASSERT_EQ(prCommEnableProfiling(comm, 8), prSuccess) << prGetLastError();
  std::vector<std::vector<float>> data(2, std::vector<float>(1024, 2.0f));
  for (int op = 0; op < 3; ++op) {
    for (int r = 0; r < 2; ++r) {
      auto& d = data[static_cast<std::size_t>(r)];
      ASSERT_EQ(prAllReduce(d.data(), d.data(), d.size(), prFloat32, prMax, fixture.comms[static_cast<std::size_t>(r)],
                            nullptr),
                prSuccess)
          << prGetLastError();
    }
  }
  ASSERT_EQ(prSimWorldRun(fixture.world), prSuccess) << prGetLastError();
  for (prComm_t comm : fixture.comms) {
    prProfileSummary_t summary;
    ASSERT_EQ(prCommProfileSummary(comm, &summary), prSuccess) << prGetLastError();
    EXPECT_EQ(summary.operations, 3u);
    EXPECT_EQ(summary.timed, 3u);
    EXPECT_EQ(summary.dropped, 0u);
    EXPECT_EQ(summary.bytes, 3u * 1024 * sizeof(float));
    EXPECT_GT(summary.total_us, 0.0);
    EXPECT_LE(summary.min_us, summary.median_us);
    EXPECT_LE(summary.median_us, summary.max_us);
    EXPECT_GT(summary.busbw_gbps, 0.0);
  }
  ASSERT_EQ(prCommDisableProfiling(fixture.comms[1]), prSuccess);
  expectRejected(prCommProfileSummary(fixture.comms[1], &untouched), prUnavailable, "profiling is off");
  expectRejected(prCommProfileSummary(fixture.comms[0], nullptr), prInvalidArgument, "summary");
  expectRejected(prCommProfileSummary(nullptr, &untouched), prInvalidArgument, "comm");
  expectRejected(prCommEnableProfiling(nullptr, 4), prInvalidArgument, "comm");
  expectRejected(prCommDisableProfiling(nullptr), prInvalidArgument, "comm");
}

TEST(CApi, BatchReducesEveryItemAndRefusesBadArguments) {
  SimWorldFixture fixture(2);
  ASSERT_TRUE(fixture.ready());
  // Three tensors per rank (one in place), rank r holding r + 1: every result is 3.
  std::vector<std::vector<float>> in(2, std::vector<float>(100)), out(2, std::vector<float>(100, -1.0f));
  for (int r = 0; r < 2; ++r) {
    auto& i = in[static_cast<std::size_t>(r)];
    std::fill(i.begin(), i.end(), static_cast<float>(r + 1));
    auto& o = out[static_cast<std::size_t>(r)];
    const prBatchItem_t items[3] = {
        {i.data(), o.data(), 10}, {i.data() + 10, o.data() + 10, 50}, {i.data() + 60, i.data() + 60, 40}};
    ASSERT_EQ(prAllReduceBatch(items, 3, prFloat32, prSum, fixture.comms[static_cast<std::size_t>(r)], nullptr),
              prSuccess)
        << prGetLastError();
  }
  ASSERT_EQ(prSimWorldRun(fixture.world), prSuccess) << prGetLastError();
  for (int r = 0; r < 2; ++r) {
    for (std::size_t k = 0; k < 60; ++k) EXPECT_EQ(out[static_cast<std::size_t>(r)][k], 3.0f);
    for (std::size_t k = 60; k < 100; ++k) EXPECT_EQ(in[static_cast<std::size_t>(r)][k], 3.0f);
  }
  std::vector<prBatchItem_t> many(1025, prBatchItem_t{in[0].data(), in[0].data(), 1});
  expectRejected(prAllReduceBatch(many.data(), many.size(), prFloat32, prSum, fixture.comms[0], nullptr),
                 prInvalidArgument, "1025 items");
  expectRejected(prAllReduceBatch(nullptr, 2, prFloat32, prSum, fixture.comms[0], nullptr), prInvalidArgument, "items");
  const prBatchItem_t bad[1] = {{nullptr, out[0].data(), 4}};
  expectRejected(prAllReduceBatch(bad, 1, prFloat32, prSum, fixture.comms[0], nullptr), prInvalidArgument,
                 "batch item 0");
  expectRejected(prAllReduceBatch(bad, 1, prFloat32, prSum, nullptr, nullptr), prInvalidArgument, "comm");
  EXPECT_EQ(prAllReduceBatch(nullptr, 0, prFloat32, prSum, fixture.comms[0], nullptr), prSuccess) << prGetLastError();
}

TEST(CApiErrors, WorldSizeOutsideOneTo64IsRejectedAndWorldIsNull) {
  for (int nranks : {0, 65, -1}) {
    SCOPED_TRACE(nranks);
    int dummy = 0;
    prSimWorld_t world = reinterpret_cast<prSimWorld_t>(&dummy);
    expectRejected(prSimWorldCreate(nranks, 1, &world), prInvalidArgument, std::to_string(nranks).c_str());
    EXPECT_TRUE(contains(prGetLastError(), "1..64")) << prGetLastError();
    EXPECT_EQ(world, nullptr);
  }
}

TEST(CApiErrors, RankOutsideTheWorldIsRejectedAndCommIsNull) {
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(3, 1, &world), prSuccess);
  for (int rank : {-1, 3, 64}) {
    SCOPED_TRACE(rank);
    int dummy = 0;
    prComm_t comm = reinterpret_cast<prComm_t>(&dummy);
    expectRejected(prCommInitSimRank(world, rank, nullptr, &comm), prInvalidArgument, "outside 0..2");
    EXPECT_TRUE(contains(prGetLastError(), ("rank " + std::to_string(rank)).c_str())) << prGetLastError();
    EXPECT_EQ(comm, nullptr);
  }
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess);
}

TEST(CApiErrors, InvalidConfigIsRejectedByFieldAndEveryCommIsNull) {
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(3, 1, &world), prSuccess);
  prConfig_t good{};
  ASSERT_EQ(prConfigInit(&good), prSuccess) << prGetLastError();

  struct Case {
    const char* name;
    prConfig_t config;
    const char* keyword;
  };
  std::vector<Case> cases;
  cases.push_back({"zero timeout", good, "timeout"});
  cases.back().config.timeout_ms = 0;
  cases.push_back({"negative timeout", good, "timeout"});
  cases.back().config.timeout_ms = -5;
  cases.push_back({"tiny scratch", good, "scratch"});
  cases.back().config.scratch_bytes = 1;
  cases.push_back({"unknown algorithm", good, "algorithm"});
  cases.back().config.algorithm = 42;

  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    int dummy = 0;
    std::vector<prComm_t> comms(3, reinterpret_cast<prComm_t>(&dummy));
    expectRejected(prCommInitSimAll(world, &c.config, comms.data()), prInvalidArgument, c.keyword);
    EXPECT_TRUE(contains(prGetLastError(), "prConfig_t")) << prGetLastError();
    for (prComm_t comm : comms) EXPECT_EQ(comm, nullptr);
  }
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess);
}

TEST(CApiErrors, RanksWithDifferentConfigsFailWithMismatch) {
  prSimWorld_t world = nullptr;
  ASSERT_EQ(prSimWorldCreate(2, 1, &world), prSuccess);
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  std::vector<prResult_t> results(2, prSuccess);
  std::vector<std::string> messages(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r, config]() mutable {
      config.timeout_ms = 5000 + r;  // differs per rank
      prComm_t comm = nullptr;
      results[static_cast<std::size_t>(r)] = prCommInitSimRank(world, r, &config, &comm);
      messages[static_cast<std::size_t>(r)] = prGetLastError();
      if (comm != nullptr) (void)prCommDestroy(comm);
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r], prMismatch) << messages[r];
    EXPECT_TRUE(contains(messages[r].c_str(), "configuration")) << messages[r];
  }
  EXPECT_EQ(prSimWorldDestroy(world), prSuccess);
}

TEST(CApiErrors, SynchronizeOfOneRankAloneTimesOutInsteadOfHanging) {
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess) << prGetLastError();
  config.timeout_ms = 500;  // short, since this test waits it out once, yet ample for creation under sanitizers
  SimWorldFixture fixture(2, &config);
  ASSERT_TRUE(fixture.ready());
  expectRejected(prCommSynchronize(fixture.comms[0], nullptr), prTimeout, "synchronize");
}

// Every rejected allreduce: the right code, a message naming the problem, and no byte of the
// destination (nor of the source) changed. Afterwards the communicator still works.
TEST(CApiErrors, RejectedAllreduceNamesTheProblemAndLeavesBuffersUnchanged) {
  SimWorldFixture fixture(2);
  ASSERT_TRUE(fixture.ready());
  prComm_t comm = fixture.comms[0];
  constexpr std::size_t kCount = 64;
  std::vector<float> send(kCount, 1.5f);
  std::vector<float> recv(kCount, kSentinelFloat);
  // Declared here, not in its block, so that a call wrongly accepted cannot leave work on a freed buffer.
  std::vector<std::uint16_t> half(kCount, kSentinelBf16);
  const std::vector<float> send_before = send;
  const std::vector<float> recv_before = recv;
  auto expectUntouched = [&] {
    EXPECT_EQ(std::memcmp(send.data(), send_before.data(), kCount * sizeof(float)), 0) << "send changed";
    EXPECT_EQ(std::memcmp(recv.data(), recv_before.data(), kCount * sizeof(float)), 0) << "recv changed";
  };

  {
    SCOPED_TRACE("null send");
    expectRejected(prAllReduce(nullptr, recv.data(), kCount, prFloat32, prSum, comm, nullptr), prInvalidArgument,
                   "send buffer is null");
    expectUntouched();
  }
  {
    SCOPED_TRACE("null recv");
    expectRejected(prAllReduce(send.data(), nullptr, kCount, prFloat32, prSum, comm, nullptr), prInvalidArgument,
                   "recv buffer is null");
    expectUntouched();
  }
  {
    SCOPED_TRACE("count x element size overflows");
    expectRejected(prAllReduce(send.data(), recv.data(), SIZE_MAX / 2, prFloat32, prSum, comm, nullptr),
                   prInvalidArgument, "overflows");
    expectUntouched();
  }
  {
    SCOPED_TRACE("unknown dtype");
    expectRejected(prAllReduce(send.data(), recv.data(), kCount, static_cast<prDataType_t>(42), prSum, comm, nullptr),
                   prInvalidArgument, "dtype value 42");
    expectUntouched();
    expectRejected(prAllReduce(send.data(), recv.data(), kCount, static_cast<prDataType_t>(-1), prSum, comm, nullptr),
                   prInvalidArgument, "dtype value -1");
    expectUntouched();
    // The first value past the last type (prFloat8e5m2 = 11) is refused, naming the valid range.
    expectRejected(prAllReduce(send.data(), recv.data(), kCount, prNumDataTypes, prSum, comm, nullptr),
                   prInvalidArgument, "dtype value 12 (valid: 0..11");
    expectUntouched();
  }
  {
    SCOPED_TRACE("unknown op");
    expectRejected(prAllReduce(send.data(), recv.data(), kCount, prFloat32, static_cast<prRedOp_t>(42), comm, nullptr),
                   prInvalidArgument, "op value 42");
    expectUntouched();
  }
  {
    SCOPED_TRACE("misaligned fp32");
    const auto* misaligned = reinterpret_cast<const unsigned char*>(send.data()) + 1;
    expectRejected(prAllReduce(misaligned, recv.data(), kCount / 2, prFloat32, prSum, comm, nullptr), prInvalidArgument,
                   "aligned");
    expectUntouched();
  }
  {
    SCOPED_TRACE("overlapping but not identical");
    // recv starts one element into send: both live in `send`, so that whole buffer must stay as it was.
    expectRejected(prAllReduce(send.data(), send.data() + 1, kCount / 2, prFloat32, prSum, comm, nullptr),
                   prInvalidArgument, "overlap");
    expectUntouched();
  }
  {
    SCOPED_TRACE("bf16 sentinel survives an unknown op");
    expectRejected(prAllReduce(half.data(), half.data(), kCount, prBFloat16, static_cast<prRedOp_t>(5), comm, nullptr),
                   prInvalidArgument, "op value 5");
    EXPECT_EQ(half, std::vector<std::uint16_t>(kCount, kSentinelBf16));
  }

  // Nothing was enqueued by the rejected calls: the communicators still agree and work.
  EXPECT_EQ(prCommGetAsyncError(comm), prSuccess);
  checkAllreduce<float>(fixture, prFloat32, prSum, false, 17, fp32Input,
                        [](std::size_t i) { return fp32Input(0, i) + fp32Input(1, i); });
}

// ---- Names and the last error ----------------------------------------------------------------------

// The build's GPU platform, as the library reports it: this suite's build is the simulator's ("none"), and
// the answer is the GPU transport's own name; a NULL out-pointer is refused by name.
TEST(CApi, GpuPlatformNamesThisBuildsPlatform) {
  const char* platform = nullptr;
  ASSERT_EQ(prGetGpuPlatform(&platform), prSuccess);
  ASSERT_NE(platform, nullptr);
  EXPECT_STREQ(platform, peerreduce::gpuPlatformName());
  const std::string name = platform;
  EXPECT_TRUE(name == "none" || name == "cuda" || name == "hip") << name;
  EXPECT_EQ(prGetGpuPlatform(nullptr), prInvalidArgument);
  EXPECT_NE(std::string(prGetLastError()).find("platform"), std::string::npos) << prGetLastError();
}

TEST(CApiErrorStrings, EveryResultHasItsNameAndOthersAreUnknown) {
  EXPECT_STREQ(prGetErrorString(prSuccess), "success");
  std::vector<std::string> seen;
  for (int value = 1; value < prNumResults; ++value) {
    const char* name = prGetErrorString(static_cast<prResult_t>(value));
    ASSERT_NE(name, nullptr);
    EXPECT_EQ(std::string(name), std::string(peerreduce::errorCodeName(static_cast<peerreduce::ErrorCode>(value))))
        << value;
    seen.emplace_back(name);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end()) << "two results share a name";
  EXPECT_STREQ(prGetErrorString(prInvalidArgument), "invalid argument");
  EXPECT_STREQ(prGetErrorString(prCorrupt), "corrupt");
  for (int value : {static_cast<int>(prNumResults), 42, -1, INT_MAX, INT_MIN}) {
    EXPECT_STREQ(prGetErrorString(static_cast<prResult_t>(value)), "unknown result") << value;
  }
}

TEST(CApiLastError, IsEmptyOnAFreshThreadAndNamesTheFailingFunction) {
  std::string fresh = "unset";
  std::thread([&] { fresh = prGetLastError(); }).join();
  EXPECT_EQ(fresh, "");

  EXPECT_EQ(prCommDestroy(nullptr), prInvalidArgument);
  EXPECT_TRUE(contains(prGetLastError(), "prCommDestroy")) << prGetLastError();
  EXPECT_TRUE(contains(prGetLastError(), "invalid argument")) << prGetLastError();
}

TEST(CApiLastError, IsPerThread) {
  EXPECT_EQ(prSimWorldRun(nullptr), prInvalidArgument);
  const std::string mine = prGetLastError();
  ASSERT_TRUE(contains(mine.c_str(), "prSimWorldRun")) << mine;

  std::string theirs;
  std::thread([&] {
    EXPECT_EQ(prCommSize(nullptr, nullptr), prInvalidArgument);
    theirs = prGetLastError();
  }).join();
  EXPECT_TRUE(contains(theirs.c_str(), "prCommSize")) << theirs;
  EXPECT_EQ(std::string(prGetLastError()), mine);
}

TEST(CApiLastError, SuccessfulCallsKeepTheLastFailure) {
  EXPECT_EQ(prCommRank(nullptr, nullptr), prInvalidArgument);
  const std::string failure = prGetLastError();
  prConfig_t config{};
  ASSERT_EQ(prConfigInit(&config), prSuccess);
  EXPECT_EQ(std::string(prGetLastError()), failure);
}

TEST(CApiHeader, CompilesAsC11AndWorksFromC) { EXPECT_EQ(runCHeaderChecks(), 0) << prGetLastError(); }

}  // namespace
