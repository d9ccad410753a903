// The hardware world provider: one MPI process per GPU, the real GPU transport, the MPI bootstrap.
//
// Every collective the suites make (creating communicators, the verdicts) happens in the same order on
// every rank because every rank runs the same test binary with the same RapidCheck seed (the hardware
// stage sets RC_PARAMS identically for all ranks) and every verdict is collective.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "device_buffer.h"
#include "peerreduce/gpu.h"
#include "peerreduce/mpi_bootstrap.h"
#include "portability.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

// Verdict collectives are bounded like everything else: a rank that died must not hang the others.
constexpr auto kVerdictTimeout = std::chrono::seconds(120);
constexpr auto kPollInterval = std::chrono::microseconds(50);

void collective(void* send, void* recv, int count, MPI_Datatype type, MPI_Op op) {
  MPI_Request request;
  MPI_Iallreduce(send, recv, count, type, op, MPI_COMM_WORLD, &request);
  const auto deadline = std::chrono::steady_clock::now() + kVerdictTimeout;
  for (int done = 0; !done;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done && std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "peerreduce tests: a verdict collective took over %lld s; a rank is gone. Aborting.\n",
                   static_cast<long long>(kVerdictTimeout.count()));
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (!done) std::this_thread::sleep_for(kPollInterval);
  }
}

class GpuTestWorld final : public TestWorld {
 public:
  GpuTestWorld(int rank, int size, std::unique_ptr<Communicator> comm)
      : rank_(rank), size_(size), local_{rank}, comm_(std::move(comm)) {}
  int size() const override { return size_; }
  const std::vector<int>& localRanks() const override { return local_; }
  Communicator& comm(int /*rank*/) override { return *comm_; }
  Status completeAll() override { return comm_->synchronize(nullptr); }
  bool allRanksAgree(bool local) override {
    int mine = local ? 1 : 0;
    int all = 0;
    collective(&mine, &all, 1, MPI_INT, MPI_LAND);
    return all != 0;
  }
  bool allRanksEqual(std::uint64_t value) override {
    unsigned long long values[2] = {value, ~value};
    unsigned long long extremes[2] = {0, 0};
    collective(values, extremes, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX);
    return extremes[0] == value && ~extremes[1] == value;
  }
  std::unique_ptr<TestBuffer> allocate(std::size_t bytes) override { return std::make_unique<DeviceBuffer>(bytes); }

 private:
  int rank_;
  int size_;
  std::vector<int> local_;
  std::unique_ptr<Communicator> comm_;
};

class GpuWorldProvider final : public WorldProvider {
 public:
  GpuWorldProvider(int rank, int size) : rank_(rank), size_(size) {}
  int fixedWorldSize() const override { return size_; }
  bool onHardware() const override { return true; }
  StatusOr<std::shared_ptr<TestWorld>> acquire(int size, const Config& config, std::uint64_t /*sim_seed*/) override {
    if (size != size_) {
      return invalidArgumentError("hardware world has " + std::to_string(size_) + " ranks, a test asked for " +
                                  std::to_string(size));
    }
    const std::uint64_t key = config.fingerprint();
    if (auto it = worlds_.find(key); it != worlds_.end()) return it->second;
    // The environment wins over the test's settings, as in the one-GPU provider, so the hardware stage
    // runs the same suites with PEERREDUCE_LINK_MASK (host-staged links) set.
    PR_ASSIGN_OR_RETURN(const Config effective, Config::fromEnvironment(config));
    PR_ASSIGN_OR_RETURN(auto bootstrap, createMpiBootstrap(MPI_COMM_WORLD));
    PR_ASSIGN_OR_RETURN(auto transport, createGpuTransport(rank_, size_));
    PR_ASSIGN_OR_RETURN(auto comm, Communicator::create(rank_, size_, bootstrap, transport, effective));
    auto world = std::make_shared<GpuTestWorld>(rank_, size_, std::move(comm));
    worlds_.emplace(key, world);
    return std::shared_ptr<TestWorld>(world);
  }
  void release() { worlds_.clear(); }

 private:
  int rank_;
  int size_;
  std::map<std::uint64_t, std::shared_ptr<TestWorld>> worlds_;
};

GpuWorldProvider* g_hardware = nullptr;

}  // namespace

bool setUpWorldProvider(int* argc, char*** argv) {
  // Several ranks as threads of this process on one GPU (correctness on a machine with one GPU).
  if (const char* ranks = std::getenv("PEERREDUCE_TEST_GPU_RANKS"); ranks != nullptr && *ranks != '\0') {
    auto provider = makeGpuThreadsProvider(ranks);
    if (!provider.isOk()) {
      std::fprintf(stderr, "peerreduce tests: %s\n", provider.status().toString().c_str());
      return false;
    }
    installWorldProvider(std::move(provider).value());
    return true;
  }
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) return true;  // not under mpirun: the simulator
  // Thread-multiple: the multi-machine tests' network worlds (MpiTransport) run MPI from the threads of
  // their operations.
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  // One GPU per rank, made current as an NCCL program does: the transport (local rank = rank on one
  // host) picks the same device, and every buffer the tests allocate lands on it (the library never
  // changes the caller's current device).
  int devices = 0;
  if (hipGetDeviceCount(&devices) == hipSuccess && devices > 0) (void)hipSetDevice(rank % devices);
  auto provider = std::make_unique<GpuWorldProvider>(rank, size);
  g_hardware = provider.get();
  installWorldProvider(std::move(provider));
  if (rank == 0) {
    std::printf("peerreduce tests: hardware world of %d ranks (%s GPUs, MPI bootstrap)\n", size, gpuPlatformName());
  }
  return true;
}

void tearDownWorldProvider() {
  if (g_hardware == nullptr) return;
  g_hardware->release();
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
}

}  // namespace peerreduce::testing
