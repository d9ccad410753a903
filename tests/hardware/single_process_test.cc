// Hardware-only: one process drives every visible GPU, one thread per rank, through the in-process
// bootstrap; the GPU transport maps peers of the same process directly (peer access) instead of through
// IPC handles. With one GPU, two ranks share it (ranks of one process on one device, each on a stream of
// its own). Runs on MPI rank 0 only; the other processes wait for the verdict.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "peerreduce/gpu.h"
#include "portability.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kSingleProcessCount = 1 << 16;

float valueOf(int rank, std::size_t i) { return static_cast<float>((rank + 1) * 3 + static_cast<int>(i % 11)); }

TEST(SingleProcess, OneProcessDrivesEveryGpuWithOneThreadPerRank) {
  WorldProvider& provider = worldProvider();
  ASSERT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  auto verdicts = provider.acquire(provider.fixedWorldSize(), Config{}, 1);
  ASSERT_TRUE(verdicts.isOk()) << verdicts.status().toString();
  int mpi_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
  bool ok = true;
  int devices = 0;
  int ranks = 0;
  // No ASSERT below: rank 0 must reach the verdict collective whatever happens, or the others wait.
  auto group = createInProcessGroup(2);
  if (mpi_rank == 0) {
    ok = hipGetDeviceCount(&devices) == hipSuccess && devices >= 1;
    EXPECT_TRUE(ok) << "needs a visible GPU, found " << devices;
    // One rank per GPU; on a machine with one GPU, two ranks share it (each on a stream of its own).
    ranks = std::max(devices, 2);
    if (ok) group = createInProcessGroup(ranks);
    ok = ok && group.isOk();
  }
  if (mpi_rank == 0 && ok) {
    std::vector<Status> results(static_cast<std::size_t>(ranks));
    std::vector<int> wrong(static_cast<std::size_t>(ranks), 0);
    std::vector<std::string> first_wrong(static_cast<std::size_t>(ranks));
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        Status& st = results[static_cast<std::size_t>(r)];
        const int device = r % devices;
        hipStream_t stream = nullptr;
        if (hipSetDevice(device) != hipSuccess ||
            hipStreamCreateWithFlags(&stream, hipStreamNonBlocking) != hipSuccess) {
          st = unavailableError("rank " + std::to_string(r) + ": hipSetDevice or hipStreamCreateWithFlags failed");
          return;
        }
        GpuTransportOptions options;
        options.device = device;
        auto transport = createGpuTransport(r, ranks, options);
        if (!transport.isOk()) {
          st = transport.status();
          return;
        }
        auto comm = Communicator::create(r, ranks, (*group)[static_cast<std::size_t>(r)], *transport);
        if (!comm.isOk()) {
          st = comm.status();
          (void)hipStreamDestroy(stream);
          return;
        }
        float* buffer = nullptr;
        std::vector<float> host(kSingleProcessCount);
        for (std::size_t i = 0; i < kSingleProcessCount; ++i) host[i] = valueOf(r, i);
        (void)hipMalloc(reinterpret_cast<void**>(&buffer), kSingleProcessCount * sizeof(float));
        // On the rank's own stream: a non-blocking stream is not ordered after hipMemcpy's legacy stream.
        (void)hipMemcpyAsync(buffer, host.data(), kSingleProcessCount * sizeof(float), hipMemcpyHostToDevice, stream);
        for (int round = 0; round < 3 && st.isOk(); ++round) {
          // Round 0 reduces the inputs; later rounds reduce the previous result again (x ranks).
          st = (*comm)->allreduce(buffer, buffer, kSingleProcessCount, DataType::kFloat32, ReduceOp::kSum, stream);
          if (st.isOk()) st = (*comm)->synchronize(stream);
        }
        std::vector<float> out(kSingleProcessCount);
        (void)hipMemcpyAsync(out.data(), buffer, kSingleProcessCount * sizeof(float), hipMemcpyDeviceToHost, stream);
        (void)hipStreamSynchronize(stream);
        for (std::size_t i = 0; i < kSingleProcessCount; ++i) {
          float sum = 0;
          for (int p = 0; p < ranks; ++p) sum += valueOf(p, i);
          const float want = sum * static_cast<float>(ranks) * static_cast<float>(ranks);
          if (out[i] != want && wrong[static_cast<std::size_t>(r)]++ == 0) {
            first_wrong[static_cast<std::size_t>(r)] =
                "element " + std::to_string(i) + " is " + std::to_string(out[i]) + ", expected " + std::to_string(want);
          }
        }
        (void)hipFree(buffer);
        (void)hipStreamDestroy(stream);
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < ranks; ++r) {
      EXPECT_TRUE(results[static_cast<std::size_t>(r)].isOk())
          << "rank " << r << ": " << results[static_cast<std::size_t>(r)].toString();
      EXPECT_EQ(wrong[static_cast<std::size_t>(r)], 0)
          << "rank " << r << ": " << first_wrong[static_cast<std::size_t>(r)];
      ok = ok && results[static_cast<std::size_t>(r)].isOk() && wrong[static_cast<std::size_t>(r)] == 0;
    }
  }
  EXPECT_TRUE((*verdicts)->allRanksAgree(ok));
}

}  // namespace
}  // namespace peerreduce::testing
