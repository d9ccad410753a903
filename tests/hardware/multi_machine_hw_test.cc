// Hardware-only: the communicator across machines (peerreduce/multi_machine.h) on GPUs. The MPI ranks of
// one host act as two machines (host identities "machine-0" and "machine-1", the first half of the ranks
// and the second), each rank's machine world a GPU transport on its own device and MPI between the
// machines (mpi/mpi_process_links.h), as `mpirun -np 4` over two hosts of two GPUs would run. Allreduce,
// reduce-scatter and all-gather of both strategies, and broadcast from the last rank, against the
// reference, on device buffers at several sizes (one vector, odd counts, several MiB); every rank's
// result compared with every other rank's where they must be equal. A world of an odd number of ranks
// cannot make two equal machines and is refused with a typed error naming the machines.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/machine_world.h"
#include "peerreduce/multi_machine.h"
#include "portability.h"
#include "reference/reference.h"

namespace peerreduce::testing {
namespace {

constexpr DataType kType = DataType::kFloat32;

struct World {
  int rank = 0;
  int size = 1;
};

World mpiWorld() {
  World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  return w;
}

// Whether `ok` holds on every rank.
bool everyRank(bool ok) {
  int mine = ok ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// A device buffer of `bytes`, freed when it goes out of scope.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (hipMalloc(&data_, bytes == 0 ? 1 : bytes) != hipSuccess) data_ = nullptr;
  }
  ~DeviceBuffer() { (void)hipFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }
  // The bytes are on the device when this returns: a copy from pageable memory may return before its DMA
  // lands, and the collectives run on a non-blocking stream, which does not wait for the legacy stream's work
  // (one GPU shared by two processes read stale inputs so, failing reduce-scatter and broadcast cases).
  bool upload(const std::vector<std::uint8_t>& host) {
    return data_ != nullptr && hipMemcpy(data_, host.data(), host.size(), hipMemcpyHostToDevice) == hipSuccess &&
           hipDeviceSynchronize() == hipSuccess;
  }
  std::vector<std::uint8_t> download() const {
    std::vector<std::uint8_t> host(bytes_);
    if (data_ == nullptr || hipMemcpy(host.data(), data_, bytes_, hipMemcpyDeviceToHost) != hipSuccess) host.clear();
    return host;
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

// Every rank's payload of `count` elements for case `seed` (the same on every rank: each computes all).
std::vector<std::vector<std::uint8_t>> payloads(int size, std::size_t count, std::uint64_t seed) {
  std::vector<std::vector<std::uint8_t>> all(static_cast<std::size_t>(size),
                                             std::vector<std::uint8_t>(count * dataTypeSize(kType)));
  for (int r = 0; r < size; ++r)
    fillPayload(kType, ReduceOp::kSum, seed, r, all[static_cast<std::size_t>(r)].data(), count);
  return all;
}

std::vector<const void*> pointersOf(const std::vector<std::vector<std::uint8_t>>& buffers) {
  std::vector<const void*> pointers;
  for (const auto& b : buffers) pointers.push_back(b.data());
  return pointers;
}

StatusOr<std::unique_ptr<MultiMachineCommunicator>> twoMachines(const World& w) {
  int devices = 1;
  if (hipGetDeviceCount(&devices) != hipSuccess || devices < 1) devices = 1;
  Config config;
  config.timeout = std::chrono::seconds(60);
  // One GPU per process, as mpirun gives them on one host; the first half of the ranks machine-0.
  return bench::createMachines(MPI_COMM_WORLD, w.rank, w.size, 2, w.rank % devices, config);
}

TEST(MultiMachineHw, TwoMachinesOfGpusMatchTheReferenceForEveryCollectiveAndStrategy) {
  const World w = mpiWorld();
  ASSERT_GT(w.size, 1) << "run under mpirun with at least two ranks";
  auto made = twoMachines(w);
  if (w.size % 2 != 0) {
    ASSERT_FALSE(made.isOk()) << "two machines of unequal rank counts must be refused";
    EXPECT_EQ(made.status().code(), ErrorCode::kUnsupported) << made.status().toString();
    return;
  }
  ASSERT_TRUE(made.isOk()) << made.status().toString();
  MultiMachineCommunicator& comm = **made;
  EXPECT_EQ(comm.layout().machines, 2);
  EXPECT_EQ(comm.layout().ranks_per_machine, w.size / 2);
  hipStream_t stream = nullptr;
  ASSERT_EQ(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), hipSuccess);
  const std::size_t element = dataTypeSize(kType);
  std::uint64_t seed = 11;
  bool ok = true;
  for (const std::size_t count : {std::size_t{4}, std::size_t{3001}, std::size_t{1} << 20}) {
    for (const MachineStrategy strategy : {MachineStrategy::kHierarchical, MachineStrategy::kFlat}) {
      const std::string what = std::string(machineStrategyName(strategy)) + ", " + std::to_string(count) + " elements";
      ++seed;
      {  // allreduce, out of place
        const auto inputs = payloads(w.size, count, seed);
        DeviceBuffer send(count * element), recv(count * element);
        ASSERT_TRUE(send.upload(inputs[static_cast<std::size_t>(w.rank)]));
        Status s = comm.allreduce(send.data(), recv.data(), count, kType, ReduceOp::kSum, stream, strategy);
        if (s.isOk()) s = comm.synchronize(stream);
        EXPECT_TRUE(s.isOk()) << "allreduce " << what << ": " << s.toString();
        const auto got = recv.download();
        const std::string wrong =
            got.empty() ? "download failed"
                        : compareToReference(kType, ReduceOp::kSum,
                                             referenceReduce(kType, ReduceOp::kSum, pointersOf(inputs), count),
                                             got.data(), count);
        EXPECT_EQ(wrong, "") << "allreduce " << what << " on rank " << w.rank;
        ok = ok && s.isOk() && wrong.empty();
      }
      {  // reduce-scatter: count elements per rank
        const auto inputs = payloads(w.size, count * static_cast<std::size_t>(w.size), seed);
        DeviceBuffer send(count * element * static_cast<std::size_t>(w.size)), recv(count * element);
        ASSERT_TRUE(send.upload(inputs[static_cast<std::size_t>(w.rank)]));
        Status s = comm.reduceScatter(send.data(), recv.data(), count, kType, ReduceOp::kSum, stream, strategy);
        if (s.isOk()) s = comm.synchronize(stream);
        EXPECT_TRUE(s.isOk()) << "reduce-scatter " << what << ": " << s.toString();
        const auto got = recv.download();
        const std::string wrong =
            got.empty()
                ? "download failed"
                : compareToReference(kType, ReduceOp::kSum,
                                     referenceReduceScatter(kType, ReduceOp::kSum, pointersOf(inputs), count, w.rank),
                                     got.data(), count);
        EXPECT_EQ(wrong, "") << "reduce-scatter " << what << " on rank " << w.rank;
        ok = ok && s.isOk() && wrong.empty();
      }
      {  // all-gather: bits copied, so exactly the reference
        const auto inputs = payloads(w.size, count, seed);
        DeviceBuffer send(count * element), recv(count * element * static_cast<std::size_t>(w.size));
        ASSERT_TRUE(send.upload(inputs[static_cast<std::size_t>(w.rank)]));
        Status s = comm.allGather(send.data(), recv.data(), count, kType, stream, strategy);
        if (s.isOk()) s = comm.synchronize(stream);
        EXPECT_TRUE(s.isOk()) << "all-gather " << what << ": " << s.toString();
        const auto got = recv.download();
        const std::string wrong =
            got.empty() ? "download failed"
                        : compareExactly(kType, referenceAllGather(kType, pointersOf(inputs), count), got.data());
        EXPECT_EQ(wrong, "") << "all-gather " << what << " on rank " << w.rank;
        ok = ok && s.isOk() && wrong.empty();
      }
    }
    {  // broadcast from the last rank (on the second machine)
      const auto inputs = payloads(w.size, count, ++seed);
      const int root = w.size - 1;
      DeviceBuffer send(count * element), recv(count * element);
      ASSERT_TRUE(send.upload(inputs[static_cast<std::size_t>(w.rank)]));
      Status s = comm.broadcast(send.data(), recv.data(), count, kType, root, stream);
      if (s.isOk()) s = comm.synchronize(stream);
      EXPECT_TRUE(s.isOk()) << "broadcast of " << count << ": " << s.toString();
      const auto got = recv.download();
      const std::string wrong =
          got.empty() ? "download failed"
                      : compareExactly(kType, referenceBroadcast(kType, pointersOf(inputs), count, root), got.data());
      EXPECT_EQ(wrong, "") << "broadcast of " << count << " on rank " << w.rank;
      ok = ok && s.isOk() && wrong.empty();
    }
  }
  (void)hipStreamDestroy(stream);
  std::printf("multi-machine on GPUs: rank %d of %d (machine %d, local rank %d): %s\n", w.rank, w.size,
              comm.layout().machine, comm.layout().local_rank, ok ? "ok" : "FAILED");
  EXPECT_TRUE(everyRank(ok));
}

}  // namespace
}  // namespace peerreduce::testing
