// The one-GPU world provider: N ranks as threads of this process, all on one device, each with its own
// GPU transport and the in-process bootstrap. The kernels of ranks sharing a device are sized to be
// resident together (lib/gpu/device_sharing.h), so they run side by side; every rank is local, so the
// suites' collective verdicts are plain values. Results are compared bit for bit with the simulator, as
// on several GPUs.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "device_buffer.h"
#include "peerreduce/bootstrap.h"
#include "peerreduce/gpu.h"
#include "rank_threads.h"
#include "util/parse.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

class ThreadsGpuWorld final : public TestWorld {
 public:
  ThreadsGpuWorld(int device, std::vector<std::unique_ptr<Communicator>> comms)
      : device_(device), comms_(std::move(comms)), streams_(comms_.size(), nullptr) {
    (void)hipSetDevice(device_);
    for (int r = 0; r < static_cast<int>(comms_.size()); ++r) {
      local_.push_back(r);
      if (hipStreamCreateWithFlags(&streams_[static_cast<std::size_t>(r)], hipStreamNonBlocking) != hipSuccess) {
        std::fprintf(stderr, "peerreduce tests: cannot create the stream of rank %d\n", r);
        std::abort();
      }
    }
  }
  ~ThreadsGpuWorld() override {
    for (hipStream_t s : streams_) (void)hipStreamDestroy(s);
  }
  int size() const override { return static_cast<int>(comms_.size()); }
  const std::vector<int>& localRanks() const override { return local_; }
  Communicator& comm(int rank) override { return *comms_[static_cast<std::size_t>(rank)]; }
  StreamHandle stream(int rank) override { return streams_[static_cast<std::size_t>(rank)]; }
  Status completeAll() override {
    Status first;
    for (std::size_t r = 0; r < comms_.size(); ++r) {
      const Status s = comms_[r]->synchronize(streams_[r]);
      if (first.isOk() && !s.isOk()) first = s;
    }
    return first;
  }
  bool allRanksAgree(bool local) override { return local; }              // every rank is local
  bool allRanksEqual(std::uint64_t /*value*/) override { return true; }  // one value per process
  std::unique_ptr<TestBuffer> allocate(std::size_t bytes) override {
    (void)hipSetDevice(device_);
    return std::make_unique<DeviceBuffer>(bytes);
  }

 private:
  int device_;
  std::vector<std::unique_ptr<Communicator>> comms_;
  std::vector<hipStream_t> streams_;  // one per rank: the kernels of all ranks run side by side
  std::vector<int> local_;
};

class ThreadsGpuProvider final : public WorldProvider {
 public:
  ThreadsGpuProvider(int ranks, int device) : ranks_(ranks), device_(device) {}
  int fixedWorldSize() const override { return ranks_; }
  bool onHardware() const override { return true; }
  StatusOr<std::shared_ptr<TestWorld>> acquire(int size, const Config& config, std::uint64_t /*sim_seed*/) override {
    if (size != ranks_) {
      return invalidArgumentError("one-GPU world has " + std::to_string(ranks_) + " ranks, a test asked for " +
                                  std::to_string(size));
    }
    const std::uint64_t key = config.fingerprint();
    if (auto it = worlds_.find(key); it != worlds_.end()) return it->second;
    // The environment wins over the test's settings here (Config::fromEnvironment), so a run on one GPU
    // can shorten the timeout (ci/hardware.sh: ranks side by side wait microseconds, not seconds).
    PR_ASSIGN_OR_RETURN(const Config effective, Config::fromEnvironment(config));
    PR_ASSIGN_OR_RETURN(auto bootstraps, createInProcessGroup(ranks_));
    std::vector<std::unique_ptr<Communicator>> comms(static_cast<std::size_t>(ranks_));
    std::vector<Status> results(static_cast<std::size_t>(ranks_));
    sim::runOnRankThreads(ranks_, [&](int r) {
      const auto i = static_cast<std::size_t>(r);
      GpuTransportOptions options;
      options.device = device_;
      auto transport = createGpuTransport(r, ranks_, options);
      if (!transport.isOk()) {
        results[i] = transport.status();
        // The others wait for this rank at creation; abandoning the group ends their waits.
        return;
      }
      auto comm = Communicator::create(r, ranks_, bootstraps[i], std::move(transport).value(), effective);
      if (comm.isOk()) {
        comms[i] = std::move(comm).value();
      } else {
        results[i] = comm.status();
      }
    });
    for (const Status& s : results) PR_RETURN_IF_ERROR(s);
    auto world = std::make_shared<ThreadsGpuWorld>(device_, std::move(comms));
    worlds_.emplace(key, world);
    return std::shared_ptr<TestWorld>(world);
  }

 private:
  int ranks_;
  int device_;
  std::map<std::uint64_t, std::shared_ptr<TestWorld>> worlds_;
};

}  // namespace

StatusOr<std::unique_ptr<WorldProvider>> makeGpuThreadsProvider(const char* spec) {
  const std::string text(spec);
  const auto colon = text.find(':');
  PR_ASSIGN_OR_RETURN(const std::int64_t ranks,
                      parseInt64(text.substr(0, colon), 1, kMaxWorldSize, "PEERREDUCE_TEST_GPU_RANKS"));
  std::int64_t device = 0;
  if (colon != std::string::npos) {
    PR_ASSIGN_OR_RETURN(device, parseInt64(text.substr(colon + 1), 0, 1023, "PEERREDUCE_TEST_GPU_RANKS device"));
  }
  std::printf("peerreduce tests: one-GPU world of %lld ranks as threads on device %lld (%s)\n",
              static_cast<long long>(ranks), static_cast<long long>(device), gpuPlatformName());
  return std::unique_ptr<WorldProvider>(
      std::make_unique<ThreadsGpuProvider>(static_cast<int>(ranks), static_cast<int>(device)));
}

}  // namespace peerreduce::testing
