// Hardware-only: recovery over the real transport and the MPI bootstrap. A rank that never joins an
// allreduce makes every other rank time out naming it; then every rank aborts, reports what its
// failure detector saw (the GPU's error word names the peer a wait timed out on), agrees over MPI,
// and the survivors shrink (MPI_Comm_split, a new GPU transport on the same device) and allreduce
// correctly; the rank left out is told so with kPeerLost.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "peerreduce/gpu.h"
#include "peerreduce/mpi_bootstrap.h"
#include "portability.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kRecoveryHwCount = 4096;

// The stage's probe-fallback step sets PEERREDUCE_GPU_FAULT_PROBE_PAIRS for the whole process; after a
// shrink to fewer ranks, a pair it names may lie outside the new world, which transport creation refuses.
bool refusesProbeFaultsOutsideTheWorld(const Status& status, int world_size) {
  const char* pairs = std::getenv("PEERREDUCE_GPU_FAULT_PROBE_PAIRS");
  return pairs != nullptr && std::string(pairs) != "all" && status.code() == ErrorCode::kInvalidArgument &&
         status.message().find("PEERREDUCE_GPU_FAULT_PROBE_PAIRS") != std::string::npos &&
         status.message().find("outside the world of " + std::to_string(world_size)) != std::string::npos;
}

TEST(HardwareRecovery, AStalledPeerTimesOutThenEveryRankAbortsAgreesShrinksAndContinues) {
  WorldProvider& provider = worldProvider();
  ASSERT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  const int n = provider.fixedWorldSize();
  // Verdicts go through a world of the provider (its collectives are bounded); the world under test
  // is made here, because it is aborted and replaced.
  auto verdicts = provider.acquire(n, Config{}, 1);
  ASSERT_TRUE(verdicts.isOk()) << verdicts.status().toString();
  TestWorld& judge = **verdicts;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int stalled = n - 1;

  auto bootstrap = createMpiBootstrap(MPI_COMM_WORLD);
  ASSERT_TRUE(bootstrap.isOk()) << bootstrap.status().toString();
  auto transport = createGpuTransport(rank, n);
  ASSERT_TRUE(transport.isOk()) << transport.status().toString();
  Config config;
  config.algorithm = Algorithm::kOneShot;
  config.timeout = std::chrono::milliseconds(2000);
  auto comm = Communicator::create(rank, n, *bootstrap, *transport, config);
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();

  float* buffer = nullptr;
  ASSERT_EQ(hipMalloc(reinterpret_cast<void**>(&buffer), kRecoveryHwCount * sizeof(float)), hipSuccess);
  std::vector<float> host(kRecoveryHwCount, static_cast<float>(rank + 1));
  ASSERT_EQ(hipMemcpy(buffer, host.data(), kRecoveryHwCount * sizeof(float), hipMemcpyHostToDevice), hipSuccess);

  // 1. The timeout, naming the stalled rank, on every other rank.
  Status status;
  if (rank != stalled) {
    status = (*comm)->allreduce(buffer, buffer, kRecoveryHwCount, DataType::kFloat32, ReduceOp::kSum);
    if (status.isOk()) status = (*comm)->synchronize();
  }
  const bool timed_out =
      rank == stalled || (status.code() == ErrorCode::kTimeout &&
                          status.message().find("rank " + std::to_string(stalled)) != std::string::npos);
  EXPECT_TRUE(timed_out) << "rank " << rank << ": " << status.toString();
  ASSERT_TRUE(judge.allRanksAgree(timed_out));

  // 2. Abort, report, agree over MPI.
  (*comm)->abort();
  const FailureReport report = (*comm)->failureReport();
  const bool report_ok = rank == stalled ? report.lost_ranks.empty() : report.lost_ranks == std::vector<int>{stalled};
  EXPECT_TRUE(report_ok) << "rank " << rank << " reported losing " << report.lost_ranks.size() << " ranks";
  auto decision = agreeOnFailures(**bootstrap, (*comm)->topology(), report, std::chrono::seconds(30));
  ASSERT_TRUE(judge.allRanksAgree(decision.isOk())) << decision.status().toString();
  std::vector<int> expected_survivors;
  for (int r = 0; r < n; ++r) {
    if (r != stalled) expected_survivors.push_back(r);
  }
  EXPECT_TRUE(
      judge.allRanksAgree(decision->survivors == expected_survivors && decision->failed == std::vector<int>{stalled}));

  // 3. Shrink: the survivors split off and make a new world on the same devices.
  const bool survivor = rank != stalled;
  MPI_Comm survivors_comm = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, survivor ? 0 : MPI_UNDEFINED, rank, &survivors_comm), MPI_SUCCESS);
  bool shrink_ok = false;
  bool result_ok = false;
  if (!survivor) {
    auto refused = shrinkCommunicator(**comm, *decision, nullptr, nullptr);
    shrink_ok = refused.status().code() == ErrorCode::kPeerLost;
    result_ok = true;
    EXPECT_TRUE(shrink_ok) << refused.status().toString();
  } else {
    const int m = n - 1;
    const int new_rank = static_cast<int>(std::find(expected_survivors.begin(), expected_survivors.end(), rank) -
                                          expected_survivors.begin());
    GpuTransportOptions options;
    (void)hipGetDevice(&options.device);  // the device this process already drives
    auto next_bootstrap = createMpiBootstrap(survivors_comm);
    auto next_transport = createGpuTransport(new_rank, m, options);
    EXPECT_TRUE(next_bootstrap.isOk()) << next_bootstrap.status().toString();
    // No early return from here to the last agreement: a rank leaving early would pair its next MPI
    // collective with another test's on the other ranks.
    if (!next_transport.isOk() && refusesProbeFaultsOutsideTheWorld(next_transport.status(), m)) {
      // The setting names ranks of the old world that the shrunk one lacks: creation must refuse it,
      // typed and naming the setting (checked here), and there is no new world to continue on.
      shrink_ok = result_ok = true;
      std::printf("rank %d: the shrunk world of %d refused the probe fault pairs, as it must: %s\n", rank, m,
                  next_transport.status().toString().c_str());
    } else if (!next_bootstrap.isOk() || !next_transport.isOk()) {
      ADD_FAILURE() << "rank " << rank << ": the shrunk world's transport: " << next_transport.status().toString();
    } else {
      auto next = shrinkCommunicator(**comm, *decision, *next_bootstrap, *next_transport);
      shrink_ok = next.isOk();
      EXPECT_TRUE(shrink_ok) << next.status().toString();
      if (shrink_ok) {
        EXPECT_EQ((*next)->size(), m);
        EXPECT_EQ((*next)->rank(), new_rank);
        // 4. Continue: the next allreduce on the shrunk world is correct.
        std::vector<float> in(kRecoveryHwCount);
        for (std::size_t i = 0; i < kRecoveryHwCount; ++i)
          in[i] = static_cast<float>((rank + 1) * 10 + static_cast<int>(i % 7));
        ASSERT_EQ(hipMemcpy(buffer, in.data(), kRecoveryHwCount * sizeof(float), hipMemcpyHostToDevice), hipSuccess);
        Status ran = (*next)->allreduce(buffer, buffer, kRecoveryHwCount, DataType::kFloat32, ReduceOp::kSum);
        if (ran.isOk()) ran = (*next)->synchronize();
        EXPECT_TRUE(ran.isOk()) << ran.toString();
        std::vector<float> out(kRecoveryHwCount);
        ASSERT_EQ(hipMemcpy(out.data(), buffer, kRecoveryHwCount * sizeof(float), hipMemcpyDeviceToHost), hipSuccess);
        result_ok = ran.isOk();
        for (std::size_t i = 0; i < kRecoveryHwCount && result_ok; ++i) {
          float want = 0;
          for (int r : expected_survivors) want += static_cast<float>((r + 1) * 10 + static_cast<int>(i % 7));
          result_ok = out[i] == want;
        }
        EXPECT_TRUE(result_ok) << "rank " << rank << ": wrong result after the shrink";
      }
    }
    MPI_Comm_free(&survivors_comm);
  }
  (void)hipFree(buffer);
  EXPECT_TRUE(judge.allRanksAgree(shrink_ok && result_ok));
}

}  // namespace
}  // namespace peerreduce::testing
