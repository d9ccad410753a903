// Streams on one communicator (simulator): each stream, numbered by first use, gets its own scratch
// from the symmetric pool (and, on GPUs, its own signal area), so operations on different streams may
// overlap; one stream more than kMaxStreams is refused with a typed error that leaves the output alone,
// and the streams already in use go on working. The same operations run concurrently on real streams
// in the hardware suite (tests/hardware/streams_hw_test.cc).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "peerreduce/communicator.h"
#include "test_world.h"

namespace peerreduce::testing {
namespace {

constexpr int kRanks = 3;
constexpr std::size_t kCount = 4096;
constexpr std::size_t kScratchBytes = 256 << 10;
constexpr float kSentinel = -777.5f;

StreamHandle fakeStream(int s) { return reinterpret_cast<StreamHandle>(static_cast<std::uintptr_t>(0x1000 + s)); }

float inputValue(int rank, int stream, std::size_t i) {
  return static_cast<float>((rank + 1) * (stream + 2) + static_cast<int>(i % 7));
}

struct RankBuffers {
  std::unique_ptr<TestBuffer> send;
  std::unique_ptr<TestBuffer> recv;
};

class StreamScratch : public ::testing::Test {
 protected:
  void SetUp() override {
    Config config;
    config.algorithm = Algorithm::kOneShot;
    config.scratch_bytes = kScratchBytes;
    config.memory.pool_bytes = 4 << 20;
    auto made = makeSimTestWorld(kRanks, sim::SimOptions{}, config);
    ASSERT_TRUE(made.isOk()) << made.status().toString();
    world_ = std::move(made).value();
  }

  // Every rank allreduces its input for `stream` on that stream; returns each rank's status.
  std::vector<Status> allreduceOn(int stream, std::vector<RankBuffers>& buffers) {
    std::vector<Status> status;
    for (int r = 0; r < kRanks; ++r) {
      RankBuffers b{world_->allocate(kCount * sizeof(float)), world_->allocate(kCount * sizeof(float))};
      std::vector<float> host(kCount);
      for (std::size_t i = 0; i < kCount; ++i) host[i] = inputValue(r, stream, i);
      b.send->upload(host.data(), 0, kCount * sizeof(float));
      std::vector<float> sentinel(kCount, kSentinel);
      b.recv->upload(sentinel.data(), 0, kCount * sizeof(float));
      status.push_back(world_->comm(r).allreduce(b.send->data(), b.recv->data(), kCount, DataType::kFloat32,
                                                 ReduceOp::kSum, fakeStream(stream)));
      buffers.push_back(std::move(b));
    }
    return status;
  }

  // Whether every rank's output holds the sum of the stream's inputs.
  bool resultsAreSums(int stream, const std::vector<RankBuffers>& buffers) {
    for (int r = 0; r < kRanks; ++r) {
      std::vector<float> out(kCount);
      buffers[static_cast<std::size_t>(r)].recv->download(out.data(), 0, kCount * sizeof(float));
      for (std::size_t i = 0; i < kCount; ++i) {
        float expected = 0;
        for (int q = 0; q < kRanks; ++q) expected += inputValue(q, stream, i);
        if (out[i] != expected) return false;
      }
    }
    return true;
  }

  std::unique_ptr<TestWorld> world_;
};

TEST_F(StreamScratch, EachStreamTakesItsOwnScratchAndAFifthIsRefusedWithoutTouchingTheOutput) {
  std::vector<std::vector<RankBuffers>> buffers(kMaxStreams + 1);
  for (int s = 0; s < kMaxStreams; ++s) {
    for (const Status& st : allreduceOn(s, buffers[static_cast<std::size_t>(s)]))
      ASSERT_TRUE(st.isOk()) << st.toString();
  }
  ASSERT_TRUE(world_->completeAll().isOk());
  for (int s = 0; s < kMaxStreams; ++s)
    EXPECT_TRUE(resultsAreSums(s, buffers[static_cast<std::size_t>(s)])) << "stream " << s;
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(world_->comm(r).scratchBytesHeld(), kMaxStreams * kScratchBytes) << "rank " << r;
    EXPECT_EQ(world_->comm(r).memoryStats().bytes_in_use, kMaxStreams * kScratchBytes) << "rank " << r;
  }

  // One stream too many: kUnsupported on every rank, naming the limit; the output keeps its sentinel.
  const auto refused = allreduceOn(kMaxStreams, buffers[kMaxStreams]);
  for (int r = 0; r < kRanks; ++r) {
    const Status& st = refused[static_cast<std::size_t>(r)];
    EXPECT_EQ(st.code(), ErrorCode::kUnsupported) << st.toString();
    EXPECT_NE(st.message().find("at most " + std::to_string(kMaxStreams) + " streams"), std::string::npos)
        << st.toString();
    EXPECT_NE(st.message().find("rank " + std::to_string(r)), std::string::npos) << st.toString();
    std::vector<float> out(kCount);
    buffers[kMaxStreams][static_cast<std::size_t>(r)].recv->download(out.data(), 0, kCount * sizeof(float));
    EXPECT_EQ(out.front(), kSentinel);
    EXPECT_EQ(out.back(), kSentinel);
  }
  ASSERT_TRUE(world_->completeAll().isOk());

  // The streams in use keep their slots and scratch: stream 2 again is correct, nothing new is taken.
  std::vector<RankBuffers> again;
  for (const Status& st : allreduceOn(2, again)) ASSERT_TRUE(st.isOk()) << st.toString();
  ASSERT_TRUE(world_->completeAll().isOk());
  EXPECT_TRUE(resultsAreSums(2, again));
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(world_->comm(r).scratchBytesHeld(), kMaxStreams * kScratchBytes);

  // releaseScratch gives back every stream's scratch; the next operation takes its stream's again.
  for (int r = 0; r < kRanks; ++r) world_->comm(r).releaseScratch();
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(world_->comm(r).scratchBytesHeld(), 0u);
  std::vector<RankBuffers> after;
  for (const Status& st : allreduceOn(1, after)) ASSERT_TRUE(st.isOk()) << st.toString();
  ASSERT_TRUE(world_->completeAll().isOk());
  EXPECT_TRUE(resultsAreSums(1, after));
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(world_->comm(r).scratchBytesHeld(), kScratchBytes);
}

// With the default settings (32 MiB scratch, a 64 MiB pool) every one of the kMaxStreams streams gets
// scratch: the first its preferred size, each later one a share of what is left for it and the streams
// that may still come. Before, two 32 MiB blocks filled the pool and a third stream failed with
// kOutOfMemory.
TEST(StreamScratchDefaults, EveryStreamFindsScratchWithTheDefaultSettings) {
  Config config;
  config.algorithm = Algorithm::kOneShot;
  auto made = makeSimTestWorld(kRanks, sim::SimOptions{}, config);
  ASSERT_TRUE(made.isOk()) << made.status().toString();
  TestWorld& world = **made;
  std::vector<std::unique_ptr<TestBuffer>> keep;
  for (int s = 0; s < kMaxStreams; ++s) {
    for (int r = 0; r < kRanks; ++r) {
      auto buffer = world.allocate(kCount * sizeof(float));
      std::vector<float> host(kCount, static_cast<float>(r + s));
      buffer->upload(host.data(), 0, kCount * sizeof(float));
      const Status st = world.comm(r).allreduce(buffer->data(), buffer->data(), kCount, DataType::kFloat32,
                                                ReduceOp::kSum, fakeStream(s));
      ASSERT_TRUE(st.isOk()) << "stream " << s << ": " << st.toString();
      keep.push_back(std::move(buffer));
    }
  }
  ASSERT_TRUE(world.completeAll().isOk());
  for (int s = 0; s < kMaxStreams; ++s) {
    std::vector<float> out(kCount);
    keep[static_cast<std::size_t>(s * kRanks)]->download(out.data(), 0, kCount * sizeof(float));
    EXPECT_EQ(out[0], static_cast<float>(3 * s + 3)) << "stream " << s;
  }
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_LE(world.comm(r).scratchBytesHeld(), config.memory.pool_bytes);
    EXPECT_GE(world.comm(r).scratchBytesHeld(), config.scratch_bytes + 3 * kMinScratchBytes);
  }
}

}  // namespace
}  // namespace peerreduce::testing
