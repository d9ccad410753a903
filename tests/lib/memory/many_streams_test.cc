// Any number of streams on one communicator (simulator): operations match across ranks by their order
// of call, never by stream (NCCL's rule), so ranks that use 16 streams in different orders, each first
// using them in an order of its own, still get every result right; eager operations on every stream
// share channel 0's scratch, so no stream takes more memory. Before, a communicator numbered streams by
// first use, gave each its own signal area and scratch, and refused a fifth stream with kUnsupported (a
// PyTorch program that used a fifth stream died), and ranks whose first uses differed matched the wrong
// signal areas. The same runs on real streams in the hardware suite (tests/hardware/streams_hw_test.cc).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "peerreduce/communicator.h"
#include "test_world.h"

namespace peerreduce::testing {
namespace {

constexpr int kManyStreamsRanks = 3;
constexpr int kManyStreamsStreams = 16;
constexpr std::size_t kManyStreamsCount = 4096;
constexpr std::size_t kManyStreamsScratchBytes = 256 << 10;
constexpr float kManyStreamsSentinel = -777.5f;

StreamHandle fakeStream(int s) { return reinterpret_cast<StreamHandle>(static_cast<std::uintptr_t>(0x1000 + s)); }

// The stream rank `rank` enqueues its operation number `op` on: a different permutation of the 16
// streams on every rank, so every rank first uses its streams in another order.
int streamOf(int rank, int op) { return (op * (2 * rank + 1) + 5 * rank) % kManyStreamsStreams; }

float inputValue(int rank, int op, std::size_t i) {
  return static_cast<float>((rank + 1) * (op + 2) + static_cast<int>(i % 7));
}

struct StreamBuffers {
  std::unique_ptr<TestBuffer> send;
  std::unique_ptr<TestBuffer> recv;
};

class ManyStreams : public ::testing::Test {
 protected:
  void SetUp() override {
    Config config;
    config.algorithm = Algorithm::kOneShot;
    config.scratch_bytes = kManyStreamsScratchBytes;
    config.memory.pool_bytes = 4 << 20;
    auto made = makeSimTestWorld(kManyStreamsRanks, sim::SimOptions{}, config);
    ASSERT_TRUE(made.isOk()) << made.status().toString();
    world_ = std::move(made).value();
  }

  // Every rank allreduces its input for operation `op` on the stream streamOf gives it; returns each
  // rank's status.
  std::vector<Status> allreduceOp(int op, std::vector<StreamBuffers>& buffers) {
    std::vector<Status> status;
    for (int r = 0; r < kManyStreamsRanks; ++r) {
      StreamBuffers b{world_->allocate(kManyStreamsCount * sizeof(float)),
                      world_->allocate(kManyStreamsCount * sizeof(float))};
      std::vector<float> host(kManyStreamsCount);
      for (std::size_t i = 0; i < kManyStreamsCount; ++i) host[i] = inputValue(r, op, i);
      b.send->upload(host.data(), 0, kManyStreamsCount * sizeof(float));
      std::vector<float> sentinel(kManyStreamsCount, kManyStreamsSentinel);
      b.recv->upload(sentinel.data(), 0, kManyStreamsCount * sizeof(float));
      status.push_back(world_->comm(r).allreduce(b.send->data(), b.recv->data(), kManyStreamsCount, DataType::kFloat32,
                                                 ReduceOp::kSum, fakeStream(streamOf(r, op))));
      buffers.push_back(std::move(b));
    }
    return status;
  }

  // Whether every rank's output holds the sum of the operation's inputs.
  bool resultsAreSums(int op, const std::vector<StreamBuffers>& buffers) {
    for (int r = 0; r < kManyStreamsRanks; ++r) {
      std::vector<float> out(kManyStreamsCount);
      buffers[static_cast<std::size_t>(r)].recv->download(out.data(), 0, kManyStreamsCount * sizeof(float));
      for (std::size_t i = 0; i < kManyStreamsCount; ++i) {
        float expected = 0;
        for (int q = 0; q < kManyStreamsRanks; ++q) expected += inputValue(q, op, i);
        if (out[i] != expected) return false;
      }
    }
    return true;
  }

  std::unique_ptr<TestWorld> world_;
};

TEST(ManyStreamsOrder, EveryRankFirstUsesItsStreamsInAnotherOrder) {
  for (int r = 1; r < kManyStreamsRanks; ++r) {
    bool differs = false;
    for (int op = 0; op < kManyStreamsStreams; ++op) differs = differs || streamOf(r, op) != streamOf(0, op);
    EXPECT_TRUE(differs) << "rank " << r;
    std::vector<bool> used(kManyStreamsStreams, false);
    for (int op = 0; op < kManyStreamsStreams; ++op) used[static_cast<std::size_t>(streamOf(r, op))] = true;
    for (int s = 0; s < kManyStreamsStreams; ++s)
      EXPECT_TRUE(used[static_cast<std::size_t>(s)]) << "rank " << r << " stream " << s;
  }
}

TEST_F(ManyStreams, SixteenStreamsInDifferentOrdersPerRankGiveEveryResultAndShareOneScratch) {
  constexpr int kOps = 2 * kManyStreamsStreams;
  std::vector<std::vector<StreamBuffers>> buffers(kOps);
  for (int op = 0; op < kOps; ++op) {
    for (const Status& st : allreduceOp(op, buffers[static_cast<std::size_t>(op)])) {
      ASSERT_TRUE(st.isOk()) << "operation " << op << ": " << st.toString();
    }
  }
  ASSERT_TRUE(world_->completeAll().isOk());
  for (int op = 0; op < kOps; ++op) {
    EXPECT_TRUE(resultsAreSums(op, buffers[static_cast<std::size_t>(op)])) << "operation " << op;
  }
  for (int r = 0; r < kManyStreamsRanks; ++r) {
    EXPECT_EQ(world_->comm(r).scratchBytesHeld(), kManyStreamsScratchBytes)
        << "rank " << r << ": eager work shares channel 0";
    EXPECT_EQ(world_->comm(r).memoryStats().bytes_in_use, kManyStreamsScratchBytes) << "rank " << r;
  }

  // releaseScratch gives back the scratch; the next operation, on yet other streams, takes it again.
  for (int r = 0; r < kManyStreamsRanks; ++r) world_->comm(r).releaseScratch();
  for (int r = 0; r < kManyStreamsRanks; ++r) EXPECT_EQ(world_->comm(r).scratchBytesHeld(), 0u);
  std::vector<StreamBuffers> after;
  for (const Status& st : allreduceOp(kOps, after)) ASSERT_TRUE(st.isOk()) << st.toString();
  ASSERT_TRUE(world_->completeAll().isOk());
  EXPECT_TRUE(resultsAreSums(kOps, after));
  for (int r = 0; r < kManyStreamsRanks; ++r) EXPECT_EQ(world_->comm(r).scratchBytesHeld(), kManyStreamsScratchBytes);
}

}  // namespace
}  // namespace peerreduce::testing
