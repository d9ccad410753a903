// Streamed submits (StreamedSubmit, peerreduce/transport_capabilities.h; api/operation_submit.cc): every
// operation but a batch is asked about with what one execution of its plan holds; one the transport streams
// goes as ONE submit carrying the whole count and the lease's bytes (ExecutionRequest::ring_bytes); the rest
// as the segments before. The double below streams the way a cycling kernel would end, by running the segments the
// ring holds itself, so every result is checked against the reference as any other operation's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "peerreduce/communicator.h"
#include "select/segmenting.h"
#include "sim_cluster.h"

namespace peerreduce {
namespace {

class StreamsThroughScratch : public TransportWrapper, private StreamedSubmit {
 public:
  // `streams`: beyond what one execution holds; `always`: what fits too (a kernel laying the scratch out its way).
  StreamsThroughScratch(std::shared_ptr<Transport> inner, bool streams, bool always = false)
      : TransportWrapper(std::move(inner)), streams_(streams), always_(always) {}
  TransportCapabilities capabilities() override {
    TransportCapabilities c = TransportWrapper::capabilities();
    c.streamed_submit = this;
    return c;
  }
  bool streams(const std::shared_ptr<const Plan>&, DataType, std::size_t count, std::size_t fitting_count,
               std::size_t scratch_bytes) override {
    const std::lock_guard<std::mutex> lock(mutex_);
    asked_.push_back({count, scratch_bytes, fitting_count});
    return always_ || (streams_ && count > fitting_count);
  }
  Status submit(const ExecutionRequest& request, StreamHandle stream) override {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      submits_.push_back({request.count, request.ring_bytes});
    }
    if (request.ring_bytes == 0) return TransportWrapper::submit(request, stream);
    // What a kernel cycling through `ring_bytes` computes: the segments that much scratch holds, in order.
    const std::size_t elem = dataTypeSize(request.dtype);
    const std::size_t segment = maxSegmentCount(*request.plan, elem, request.ring_bytes);
    if (segment == 0) return internalError("a streamed request whose ring holds no segment");
    ExecutionRequest part = request;
    part.ring_bytes = 0;
    for (std::size_t done = 0; done < request.count; done += segment) {
      part.count = std::min(segment, request.count - done);
      part.send = static_cast<const std::byte*>(request.send) + done * elem;
      part.recv = static_cast<std::byte*>(request.recv) + done * elem;
      part.layout = ChunkLayout::make(part.count, request.plan->num_chunks, elem);
      PR_RETURN_IF_ERROR(TransportWrapper::submit(part, stream));
    }
    return Status::ok();
  }
  struct Seen {
    std::size_t count;
    std::size_t bytes;    // scratch asked about, or ring_bytes submitted
    std::size_t fits{0};  // asked: what one execution of the plan holds
  };
  std::vector<Seen> asked() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return asked_;
  }
  std::vector<Seen> submits() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return submits_;
  }
  void forget() {
    const std::lock_guard<std::mutex> lock(mutex_);
    asked_.clear();
    submits_.clear();
  }

 private:
  bool streams_;
  bool always_;
  std::mutex mutex_;
  std::vector<Seen> asked_;
  std::vector<Seen> submits_;
};

constexpr std::size_t kScratchBytes = std::size_t{256} << 10;
constexpr int kRanks = 2;

struct StreamWorld {
  std::unique_ptr<sim::SimCluster> cluster;
  std::vector<std::shared_ptr<StreamsThroughScratch>> transports;
};

StreamWorld worldThatStreams(bool streams, bool always = false) {
  Config config;
  config.memory.pool_bytes = std::size_t{8} << 20;
  config.scratch_bytes = kScratchBytes;  // small: a few MiB are many segments
  config.algorithm = Algorithm::kOneShot;
  StreamWorld world;
  world.transports.resize(kRanks);
  auto cluster = sim::SimCluster::create(
      kRanks, {}, config,
      [&](const std::shared_ptr<sim::SimWorld>&, int rank, std::shared_ptr<Transport> t) -> std::shared_ptr<Transport> {
        auto wrapped = std::make_shared<StreamsThroughScratch>(std::move(t), streams, always);
        world.transports[static_cast<std::size_t>(rank)] = wrapped;
        return wrapped;
      });
  EXPECT_TRUE(cluster.isOk()) << cluster.status().toString();
  if (cluster.isOk()) world.cluster = std::move(cluster).value();
  return world;
}

// Rank r's input element i: small integers, so every sum is exact in fp32.
float inputOf(int rank, std::size_t i) { return static_cast<float>((i * 7 + static_cast<std::size_t>(rank) * 3) % 61); }

// Every rank allreduces `count` floats; each rank's output is checked against the sum.
void allreduceAndCheck(StreamWorld& world, std::size_t count) {
  std::vector<std::vector<float>> in(kRanks, std::vector<float>(count));
  std::vector<std::vector<float>> out(kRanks, std::vector<float>(count, -1.0f));
  for (int r = 0; r < kRanks; ++r) {
    for (std::size_t i = 0; i < count; ++i) in[static_cast<std::size_t>(r)][i] = inputOf(r, i);
    ASSERT_TRUE(world.cluster->comm(r)
                    .allreduce(in[static_cast<std::size_t>(r)].data(), out[static_cast<std::size_t>(r)].data(), count,
                               DataType::kFloat32, ReduceOp::kSum)
                    .isOk());
  }
  ASSERT_TRUE(world.cluster->runUntilIdle().isOk());
  for (int r = 0; r < kRanks; ++r) {
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_EQ(out[static_cast<std::size_t>(r)][i], inputOf(0, i) + inputOf(1, i))
          << "rank " << r << ", element " << i;
    }
  }
}

TEST(StreamedSubmit, AnOperationLargerThanTheScratchIsOneSubmitThroughTheLease) {
  StreamWorld world = worldThatStreams(true);
  ASSERT_NE(world.cluster, nullptr);
  const std::size_t count = 300001;  // 1.2 MB of fp32: several segments of 256 KiB of scratch
  allreduceAndCheck(world, count);
  for (const auto& transport : world.transports) {
    const auto asked = transport->asked();
    ASSERT_EQ(asked.size(), 1u) << "asked once, for the whole operation";
    EXPECT_EQ(asked[0].count, count);
    EXPECT_GE(asked[0].bytes, kScratchBytes) << "the lease's bytes";
    EXPECT_LT(asked[0].fits, count) << "one execution holds less";
    EXPECT_GT(asked[0].fits, 0u);
    const auto submits = transport->submits();
    ASSERT_EQ(submits.size(), 1u) << "one submit, not one per segment";
    EXPECT_EQ(submits[0].count, count);
    EXPECT_EQ(submits[0].bytes, asked[0].bytes) << "the ring is the lease it was asked about";
  }
}

TEST(StreamedSubmit, WithoutStreamingTheOperationRunsInSegments) {
  StreamWorld world = worldThatStreams(false);
  ASSERT_NE(world.cluster, nullptr);
  allreduceAndCheck(world, 300001);
  for (const auto& transport : world.transports) {
    EXPECT_EQ(transport->asked().size(), 1u);
    const auto submits = transport->submits();
    EXPECT_GT(submits.size(), 1u) << "segments";
    for (const auto& submit : submits) EXPECT_EQ(submit.bytes, 0u) << "no ring";
  }
}

// What fits is asked about with its fit, and stays one submit without a ring unless the transport asks for one.
TEST(StreamedSubmit, WhatFitsTheScratchIsAskedWithItsFit) {
  StreamWorld world = worldThatStreams(true);
  ASSERT_NE(world.cluster, nullptr);
  allreduceAndCheck(world, 1000);
  for (const auto& transport : world.transports) {
    const auto asked = transport->asked();
    ASSERT_EQ(asked.size(), 1u);
    EXPECT_EQ(asked[0].count, 1000u);
    EXPECT_GE(asked[0].fits, 1000u) << "one execution holds it";
    ASSERT_EQ(transport->submits().size(), 1u);
    EXPECT_EQ(transport->submits()[0].bytes, 0u);
  }
}

// A transport whose kernel lays the scratch out its own way (the pushing collectives past two ranks) streams
// what fits too: one submit with the lease as its ring, exact results.
TEST(StreamedSubmit, WhatFitsStreamsWhereTheTransportAsks) {
  StreamWorld world = worldThatStreams(true, true);
  ASSERT_NE(world.cluster, nullptr);
  allreduceAndCheck(world, 1000);
  for (const auto& transport : world.transports) {
    ASSERT_EQ(transport->submits().size(), 1u);
    EXPECT_EQ(transport->submits()[0].count, 1000u);
    EXPECT_GE(transport->submits()[0].bytes, kScratchBytes) << "the lease as the ring";
  }
}

TEST(StreamedSubmit, AStreamedReduceScatterKeepsItsBlocksApart) {
  StreamWorld world = worldThatStreams(true);
  ASSERT_NE(world.cluster, nullptr);
  const std::size_t block = 150001;  // each rank's block: more than the scratch holds of one block
  std::vector<std::vector<float>> in(kRanks, std::vector<float>(block * kRanks));
  std::vector<std::vector<float>> out(kRanks, std::vector<float>(block, -1.0f));
  for (int r = 0; r < kRanks; ++r) {
    for (std::size_t i = 0; i < block * kRanks; ++i) in[static_cast<std::size_t>(r)][i] = inputOf(r, i);
    ASSERT_TRUE(world.cluster->comm(r)
                    .reduceScatter(in[static_cast<std::size_t>(r)].data(), out[static_cast<std::size_t>(r)].data(),
                                   block, DataType::kFloat32, ReduceOp::kSum)
                    .isOk());
  }
  ASSERT_TRUE(world.cluster->runUntilIdle().isOk());
  for (int r = 0; r < kRanks; ++r) {
    for (std::size_t i = 0; i < block; ++i) {
      const std::size_t at = static_cast<std::size_t>(r) * block + i;
      ASSERT_EQ(out[static_cast<std::size_t>(r)][i], inputOf(0, at) + inputOf(1, at)) << "rank " << r << ", " << i;
    }
    const auto submits = world.transports[static_cast<std::size_t>(r)]->submits();
    ASSERT_EQ(submits.size(), 1u);
    EXPECT_EQ(submits[0].count, block);
    EXPECT_GT(submits[0].bytes, 0u);
  }
}

TEST(StreamedSubmit, BatchesAreNeverStreamed) {
  StreamWorld world = worldThatStreams(true);
  ASSERT_NE(world.cluster, nullptr);
  const std::size_t count = 100;
  std::vector<std::vector<float>> in(kRanks, std::vector<float>(2 * count));
  std::vector<std::vector<float>> out(kRanks, std::vector<float>(2 * count, -1.0f));
  for (int r = 0; r < kRanks; ++r) {
    auto& mine = in[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = inputOf(r, i);
    const BatchItem items[] = {{mine.data(), out[static_cast<std::size_t>(r)].data(), count},
                               {mine.data() + count, out[static_cast<std::size_t>(r)].data() + count, count}};
    const Status batched = world.cluster->comm(r).allreduceBatch(items, DataType::kFloat32, ReduceOp::kSum);
    ASSERT_TRUE(batched.isOk() || batched.code() == ErrorCode::kUnsupported) << batched.toString();
  }
  ASSERT_TRUE(world.cluster->runUntilIdle().isOk());
  for (const auto& transport : world.transports) {
    EXPECT_TRUE(transport->asked().empty()) << "a batch is one launch over its table, never streamed";
    for (const auto& submit : transport->submits()) EXPECT_EQ(submit.bytes, 0u);
  }
}

}  // namespace
}  // namespace peerreduce
