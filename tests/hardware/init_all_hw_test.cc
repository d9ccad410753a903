// Hardware-only: prCommInitAll, NCCL's ncclCommInitAll for peerreduce's C API. One thread of MPI rank 0
// makes a communicator on every visible GPU, leaves its current device as it was, and drives them all:
// every rank's allreduce enqueued (each on a stream of its device) before any is synchronized, twice, then
// every result checked. The other MPI processes wait for the verdict.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "peerreduce/peerreduce.h"
#include "portability.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kInitAllHwCount = (1 << 20) + 3;  // past the line kernels, and not a whole number of vectors

float valueOf(int rank, std::size_t i) { return static_cast<float>(rank + 1 + static_cast<int>(i % 7)); }

// What one thread needs to drive rank r: its buffer and stream on its device.
struct RankData {
  float* buffer = nullptr;
  hipStream_t stream = nullptr;
};

TEST(InitAll, OneThreadDrivesACommunicatorOnEveryGpu) {
  WorldProvider& provider = worldProvider();
  ASSERT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  auto verdicts = provider.acquire(provider.fixedWorldSize(), Config{}, 1);
  ASSERT_TRUE(verdicts.isOk()) << verdicts.status().toString();
  int mpi_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  bool ok = true;
  // No ASSERT below: rank 0 must reach the verdict collective whatever happens, or the others wait.
  if (mpi_rank == 0) {
    int devices = 0;
    int before = -1;
    ok = hipGetDeviceCount(&devices) == hipSuccess && devices >= 1 && hipGetDevice(&before) == hipSuccess;
    EXPECT_TRUE(ok) << "needs a visible GPU";
    std::vector<prComm_t> comms(static_cast<std::size_t>(devices > 0 ? devices : 1), nullptr);
    // The devices in reverse: rank r on device n-1-r, so nothing depends on ranks and devices coinciding.
    std::vector<int> devlist;
    for (int d = devices - 1; d >= 0; --d) devlist.push_back(d);
    if (ok) {
      const prResult_t made = prCommInitAll(comms.data(), devices, devlist.data(), nullptr);
      EXPECT_EQ(made, prSuccess) << prGetLastError();
      ok = made == prSuccess;
      int after = -1;
      EXPECT_TRUE(hipGetDevice(&after) == hipSuccess && after == before)
          << "the caller's current device was " << before << ", now " << after;
    }
    std::vector<RankData> ranks(comms.size());
    for (int r = 0; ok && r < devices; ++r) {
      int device = -1;
      EXPECT_EQ(prCommDevice(comms[static_cast<std::size_t>(r)], &device), prSuccess);
      EXPECT_EQ(device, devlist[static_cast<std::size_t>(r)]) << "rank " << r;
      RankData& d = ranks[static_cast<std::size_t>(r)];
      std::vector<float> host(kInitAllHwCount);
      for (std::size_t i = 0; i < kInitAllHwCount; ++i) host[i] = valueOf(r, i);
      ok = hipSetDevice(devlist[static_cast<std::size_t>(r)]) == hipSuccess &&
           hipStreamCreateWithFlags(&d.stream, hipStreamNonBlocking) == hipSuccess &&
           hipMalloc(reinterpret_cast<void**>(&d.buffer), kInitAllHwCount * sizeof(float)) == hipSuccess &&
           hipMemcpy(d.buffer, host.data(), kInitAllHwCount * sizeof(float), hipMemcpyHostToDevice) == hipSuccess;
      EXPECT_TRUE(ok) << "rank " << r << ": setting up its buffer";
    }
    if (before >= 0) (void)hipSetDevice(before);
    for (int round = 0; ok && round < 2; ++round) {
      // Every rank's call enqueued before any is synchronized: each rank's work waits for the others'.
      for (int r = 0; ok && r < devices; ++r) {
        RankData& d = ranks[static_cast<std::size_t>(r)];
        const prResult_t enqueued = prAllReduce(d.buffer, d.buffer, kInitAllHwCount, prFloat32, prSum,
                                                comms[static_cast<std::size_t>(r)], d.stream);
        EXPECT_EQ(enqueued, prSuccess) << "rank " << r << ": " << prGetLastError();
        ok = enqueued == prSuccess;
      }
      for (int r = 0; ok && r < devices; ++r) {
        const prResult_t synced =
            prCommSynchronize(comms[static_cast<std::size_t>(r)], ranks[static_cast<std::size_t>(r)].stream);
        EXPECT_EQ(synced, prSuccess) << "rank " << r << ": " << prGetLastError();
        ok = synced == prSuccess;
      }
    }
    for (int r = 0; ok && r < devices; ++r) {
      std::vector<float> out(kInitAllHwCount);
      ok = hipMemcpy(out.data(), ranks[static_cast<std::size_t>(r)].buffer, kInitAllHwCount * sizeof(float),
                     hipMemcpyDeviceToHost) == hipSuccess;
      std::size_t wrong = 0;
      for (std::size_t i = 0; ok && i < kInitAllHwCount; ++i) {
        float sum = 0;
        for (int p = 0; p < devices; ++p) sum += valueOf(p, i);
        wrong += out[i] != sum * static_cast<float>(devices) ? 1 : 0;  // the second round sums the first's result
      }
      EXPECT_EQ(wrong, 0u) << "rank " << r;
      ok = ok && wrong == 0;
    }
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      (void)hipFree(ranks[r].buffer);
      if (ranks[r].stream != nullptr) (void)hipStreamDestroy(ranks[r].stream);
      if (comms[r] != nullptr) {
        EXPECT_EQ(prCommDestroy(comms[r]), prSuccess);
      }
    }
    if (before >= 0) (void)hipSetDevice(before);
  }
  EXPECT_TRUE((*verdicts)->allRanksAgree(ok));
}

}  // namespace
}  // namespace peerreduce::testing
