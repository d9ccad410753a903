// Hardware-only: any number of streams on one communicator. Every rank enqueues operations on 16
// streams, in an order of its own (so ranks first use their streams in different orders), alternating a
// large two-stage operation and a small low-latency one, without waiting in between: the communicator
// orders them by call across streams (NCCL's rule), and every result of every operation must be exact.
// A graph captured on one stream replays while eager operations run on another: the capture's
// operations have a channel of their own, and both must be exact.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
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

// The hardware world with the default settings, or null after a failed expectation.
std::shared_ptr<TestWorld> defaultWorld() {
  WorldProvider& provider = worldProvider();
  EXPECT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  auto world = provider.acquire(provider.fixedWorldSize(), Config{}, 1);
  EXPECT_TRUE(world.isOk()) << world.status().toString();
  return world.isOk() ? std::move(world).value() : nullptr;
}

constexpr int kStreamsHwStreams = 16;

// The stream rank `rank` enqueues operation `op` on: a permutation of the 16 streams per rank.
int streamOf(int rank, int op) { return (op * (2 * rank + 1) + 5 * rank) % kStreamsHwStreams; }

TEST(Streams, OperationsOnSixteenStreamsInRankOrdersOfTheirOwnAreExact) {
  const std::shared_ptr<TestWorld> world = defaultWorld();
  ASSERT_NE(world, nullptr);
  TestWorld& w = *world;
  const int rank = w.localRanks().front();
  Communicator& comm = w.comm(rank);
  hipStream_t streams[kStreamsHwStreams];
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
      const int op = 2 * it + s;
      const Status st =
          comm.allreduce(static_cast<float*>(sw.send->data()) + offset, static_cast<float*>(sw.recv->data()) + offset,
                         sw.count, DataType::kFloat32, ReduceOp::kSum, streams[streamOf(rank, op)]);
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

TEST(Streams, AGraphReplaysBesideEagerOperationsOnAnotherStreamAndBothAreExact) {
  const std::shared_ptr<TestWorld> world = defaultWorld();
  ASSERT_NE(world, nullptr);
  TestWorld& w = *world;
  const int rank = w.localRanks().front();
  Communicator& comm = w.comm(rank);
  constexpr std::size_t kCount = 64 << 10;  // 256 KiB: low-latency lines
  constexpr int kReplays = 3;
  hipStream_t graph_stream = nullptr;
  hipStream_t eager_stream = nullptr;
  ASSERT_EQ(hipStreamCreateWithFlags(&graph_stream, hipStreamNonBlocking), hipSuccess);
  ASSERT_EQ(hipStreamCreateWithFlags(&eager_stream, hipStreamNonBlocking), hipSuccess);
  auto graph_in = w.allocate(kCount * sizeof(float));
  auto graph_out = w.allocate(kCount * sizeof(float));
  auto eager_in = w.allocate(kCount * kReplays * sizeof(float));
  auto eager_out = w.allocate(kCount * kReplays * sizeof(float));
  std::vector<float> host(kCount * kReplays);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = inputValue(rank, 1, static_cast<int>(i / kCount), i);
  eager_in->upload(host.data(), 0, host.size() * sizeof(float));
  for (std::size_t i = 0; i < kCount; ++i) host[i] = inputValue(rank, 0, 0, i);
  graph_in->upload(host.data(), 0, kCount * sizeof(float));
  hipGraph_t graph = nullptr;
  hipGraphExec_t exec = nullptr;
  ASSERT_EQ(hipStreamBeginCapture(graph_stream, hipStreamCaptureModeThreadLocal), hipSuccess);
  const Status captured =
      comm.allreduce(graph_in->data(), graph_out->data(), kCount, DataType::kFloat32, ReduceOp::kSum, graph_stream);
  ASSERT_EQ(hipStreamEndCapture(graph_stream, &graph), hipSuccess);
  ASSERT_TRUE(captured.isOk()) << captured.toString();
  ASSERT_EQ(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0), hipSuccess);
  bool ok = true;
  for (int r = 0; r < kReplays && ok; ++r) {
    ok = hipGraphLaunch(exec, graph_stream) == hipSuccess;
    const std::size_t offset = static_cast<std::size_t>(r) * kCount;
    const Status st =
        comm.allreduce(static_cast<float*>(eager_in->data()) + offset, static_cast<float*>(eager_out->data()) + offset,
                       kCount, DataType::kFloat32, ReduceOp::kSum, eager_stream);
    EXPECT_TRUE(st.isOk()) << st.toString();
    ok = ok && st.isOk();
  }
  for (hipStream_t s : {graph_stream, eager_stream}) {
    const Status st = comm.synchronize(s);
    EXPECT_TRUE(st.isOk()) << st.toString();
    ok = ok && st.isOk();
  }
  std::size_t wrong = 0;
  if (ok) {
    std::vector<float> out(kCount * kReplays);
    eager_out->download(out.data(), 0, out.size() * sizeof(float));
    for (std::size_t i = 0; i < out.size(); ++i) {
      float expected = 0;
      for (int q = 0; q < w.size(); ++q) expected += inputValue(q, 1, static_cast<int>(i / kCount), i);
      wrong += out[i] == expected ? 0 : 1;
    }
    graph_out->download(out.data(), 0, kCount * sizeof(float));
    for (std::size_t i = 0; i < kCount; ++i) {
      float expected = 0;
      for (int q = 0; q < w.size(); ++q) expected += inputValue(q, 0, 0, i);
      wrong += out[i] == expected ? 0 : 1;
    }
  }
  (void)hipGraphExecDestroy(exec);
  (void)hipGraphDestroy(graph);
  (void)hipStreamDestroy(graph_stream);
  (void)hipStreamDestroy(eager_stream);
  EXPECT_TRUE(w.allRanksAgree(ok && wrong == 0)) << wrong << " wrong elements on rank " << rank;
}

}  // namespace
}  // namespace peerreduce::testing
