// Hardware-only: two streams on one communicator, each with its own signal area and scratch. Every
// rank enqueues operations alternately on both streams without waiting in between, so the GPU runs
// them concurrently (a large two-stage operation on one stream, small low-latency ones on the other);
// every result of every operation must be exact.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "portability.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

constexpr int kIterations = 20;
constexpr std::size_t kLargeCount = 256 << 10;  // 1 MiB of fp32
constexpr std::size_t kSmallCount = 1024;       // 4 KiB

float inputValue(int rank, int stream, int iteration, std::size_t i) {
  return static_cast<float>((rank + 1) * (stream + 1) + iteration * 3 + static_cast<int>(i % 11));
}

struct StreamWork {
  std::size_t count;
  std::unique_ptr<TestBuffer> send;
  std::unique_ptr<TestBuffer> recv;
};

TEST(Streams, OperationsOnTwoStreamsOverlapAndEveryResultIsExact) {
  WorldProvider& provider = worldProvider();
  ASSERT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  auto world = provider.acquire(provider.fixedWorldSize(), Config{}, 1);
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  TestWorld& w = **world;
  const int rank = w.localRanks().front();
  Communicator& comm = w.comm(rank);
  hipStream_t streams[2];
  for (auto& s : streams) ASSERT_EQ(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), hipSuccess);
  std::vector<StreamWork> work;
  for (std::size_t count : {kLargeCount, kSmallCount}) {
    const std::size_t bytes = count * kIterations * sizeof(float);
    work.push_back(StreamWork{count, w.allocate(bytes), w.allocate(bytes)});
  }
  for (int s = 0; s < 2; ++s) {
    StreamWork& sw = work[static_cast<std::size_t>(s)];
    std::vector<float> host(sw.count * kIterations);
    for (int it = 0; it < kIterations; ++it) {
      for (std::size_t i = 0; i < sw.count; ++i) host[it * sw.count + i] = inputValue(rank, s, it, i);
    }
    sw.send->upload(host.data(), 0, host.size() * sizeof(float));
  }
  bool enqueued = true;
  for (int it = 0; it < kIterations && enqueued; ++it) {
    for (int s = 0; s < 2; ++s) {
      StreamWork& sw = work[static_cast<std::size_t>(s)];
      const std::size_t offset = static_cast<std::size_t>(it) * sw.count;
      const Status st =
          comm.allreduce(static_cast<float*>(sw.send->data()) + offset, static_cast<float*>(sw.recv->data()) + offset,
                         sw.count, DataType::kFloat32, ReduceOp::kSum, streams[s]);
      EXPECT_TRUE(st.isOk()) << st.toString();
      enqueued = enqueued && st.isOk();
    }
  }
  for (auto& s : streams) {
    const Status st = comm.synchronize(s);
    EXPECT_TRUE(st.isOk()) << st.toString();
    enqueued = enqueued && st.isOk();
  }
  std::size_t wrong = 0;
  for (int s = 0; s < 2 && enqueued; ++s) {
    StreamWork& sw = work[static_cast<std::size_t>(s)];
    std::vector<float> out(sw.count * kIterations);
    sw.recv->download(out.data(), 0, out.size() * sizeof(float));
    for (int it = 0; it < kIterations; ++it) {
      for (std::size_t i = 0; i < sw.count; ++i) {
        float expected = 0;
        for (int q = 0; q < w.size(); ++q) expected += inputValue(q, s, it, i);
        wrong += out[it * sw.count + i] == expected ? 0 : 1;
      }
    }
  }
  for (auto& s : streams) (void)hipStreamDestroy(s);
  EXPECT_TRUE(w.allRanksAgree(enqueued && wrong == 0)) << wrong << " wrong elements on rank " << rank;
}

}  // namespace
}  // namespace peerreduce::testing
