// Hardware-only: ranks that call different operations on GPUs get kMismatch, never a result. The last
// rank's allreduce has another count; the ranks compare their calls through the communicator's operation
// log (lib/api/operation_log.h). Whichever posts later refuses its call (nothing launched, its buffer
// untouched) and sets every rank's stop word; a rank whose kernel was launched reads its stop word as its
// abort word, so its synchronize returns the same mismatch at once, far inside its 20 s deadline. Every
// later call is refused.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <string>
#include <vector>

#include "peerreduce/gpu.h"
#include "peerreduce/mpi_bootstrap.h"
#include "portability.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kOperationAgreementHwCount = 4096;

TEST(HardwareOperationAgreement, RanksWithDifferentCountsGetMismatchNotAResult) {
  WorldProvider& provider = worldProvider();
  ASSERT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  const int n = provider.fixedWorldSize();
  if (n < 2) GTEST_SKIP() << "a world of one rank has no peer to disagree with";
  auto verdicts = provider.acquire(n, Config{}, 1);
  ASSERT_TRUE(verdicts.isOk()) << verdicts.status().toString();
  TestWorld& judge = **verdicts;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  auto bootstrap = createMpiBootstrap(MPI_COMM_WORLD);
  ASSERT_TRUE(bootstrap.isOk()) << bootstrap.status().toString();
  auto transport = createGpuTransport(rank, n);
  ASSERT_TRUE(transport.isOk()) << transport.status().toString();
  Config config;
  config.timeout = std::chrono::milliseconds(20000);
  auto comm = Communicator::create(rank, n, *bootstrap, *transport, config);
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();

  float* buffer = nullptr;
  ASSERT_EQ(hipMalloc(reinterpret_cast<void**>(&buffer), kOperationAgreementHwCount * sizeof(float)), hipSuccess);
  const std::vector<float> before(kOperationAgreementHwCount, static_cast<float>(rank + 1));
  ASSERT_EQ(hipMemcpy(buffer, before.data(), kOperationAgreementHwCount * sizeof(float), hipMemcpyHostToDevice),
            hipSuccess);

  const std::size_t count = rank == n - 1 ? kOperationAgreementHwCount - 16 : kOperationAgreementHwCount;
  const auto began = std::chrono::steady_clock::now();
  Status status = (*comm)->allreduce(buffer, buffer, count, DataType::kFloat32, ReduceOp::kSum);
  const bool refused_at_call = !status.isOk();
  if (status.isOk()) status = (*comm)->synchronize();
  const auto waited = std::chrono::steady_clock::now() - began;
  EXPECT_LT(waited, std::chrono::seconds(5))
      << "rank " << rank << " waited for its deadline: the stop word did not end it";
  const bool mismatch = status.code() == ErrorCode::kMismatch &&
                        status.message().find("of the communicator differs between ranks") != std::string::npos &&
                        status.message().find("allreduce of " + std::to_string(kOperationAgreementHwCount - 16) +
                                              " fp32") != std::string::npos;
  EXPECT_TRUE(mismatch) << "rank " << rank << ": " << status.toString();
  if (refused_at_call) {
    std::vector<float> after(kOperationAgreementHwCount);
    ASSERT_EQ(hipMemcpy(after.data(), buffer, kOperationAgreementHwCount * sizeof(float), hipMemcpyDeviceToHost),
              hipSuccess);
    EXPECT_EQ(after, before) << "rank " << rank << " refused its call but its buffer changed";
  }
  EXPECT_TRUE(judge.allRanksAgree(mismatch));
  // Some rank found it at its call.
  int refused = refused_at_call ? 1 : 0;
  int refusers = 0;
  MPI_Allreduce(&refused, &refusers, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GE(refusers, 1);

  // Sticky: the next call is refused on every rank, at once.
  const Status next =
      (*comm)->allreduce(buffer, buffer, kOperationAgreementHwCount, DataType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(next.code(), ErrorCode::kMismatch) << "rank " << rank << ": " << next.toString();
  (*comm)->abort();
  comm->reset();
  (void)hipFree(buffer);
}

}  // namespace
}  // namespace peerreduce::testing
