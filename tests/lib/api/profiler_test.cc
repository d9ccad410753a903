// The profiler (peerreduce/profiler.h) on the simulator, where durations are virtual time: off by
// default and saying so; bad capacities refused; one record per allreduce with what it ran, timed only
// once it finished; the ring keeps the most recent and counts what it dropped; a failed operation stays
// untimed; the summary and its description agree with the records; a transport that cannot time is
// refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "engine.h"
#include "peerreduce/communicator.h"
#include "sim_cluster.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

constexpr int kProfilerRanks = 3;

Config smallConfig() {
  Config config;
  config.memory.pool_bytes = std::size_t{8} << 20;
  config.scratch_bytes = std::size_t{2} << 20;
  config.timeout = std::chrono::milliseconds(2000);
  return config;
}

std::unique_ptr<sim::SimCluster> makeProfiledCluster(const sim::SimCluster::TransportDecorator& decorate = nullptr) {
  auto cluster = sim::SimCluster::create(kProfilerRanks, {}, smallConfig(), decorate);
  EXPECT_TRUE(cluster.isOk()) << cluster.status().toString();
  return cluster.isOk() ? std::move(cluster).value() : nullptr;
}

// Every rank allreduces `count` floats of ones in place: enqueued, the cluster runs them later, so
// the buffers are appended to `data` (a deque never moves its elements) and outlive the run.
void allreduceEverywhere(sim::SimCluster& cluster, std::deque<std::vector<float>>& data, std::size_t count) {
  for (int r = 0; r < kProfilerRanks; ++r) {
    auto& d = data.emplace_back(count, 1.0f);
    ASSERT_TRUE(cluster.comm(r).allreduce(d.data(), d.data(), count, DataType::kFloat32, ReduceOp::kSum).isOk());
  }
}

TEST(Profiler, OffByDefaultAndSaysHowToTurnItOn) {
  auto cluster = makeProfiledCluster();
  ASSERT_NE(cluster, nullptr);
  EXPECT_FALSE(cluster->comm(0).profiling());
  const auto records = cluster->comm(0).profile();
  EXPECT_EQ(records.status().code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(contains(records.status().message(), "enableProfiling")) << records.status().toString();
  EXPECT_EQ(cluster->comm(0).profileSummary().status().code(), ErrorCode::kUnavailable);
}

TEST(Profiler, CapacityOutsideItsRangeIsRefusedAndLeavesProfilingOff) {
  auto cluster = makeProfiledCluster();
  ASSERT_NE(cluster, nullptr);
  for (std::size_t capacity : {std::size_t{0}, kMaxProfileCapacity + 1}) {
    const Status s = cluster->comm(1).enableProfiling(capacity);
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.toString();
    EXPECT_TRUE(contains(s.message(), "capacity " + std::to_string(capacity))) << s.message();
    EXPECT_TRUE(contains(s.message(), "rank 1")) << s.message();
    EXPECT_FALSE(cluster->comm(1).profiling());
  }
}

TEST(Profiler, EachAllreduceIsRecordedWithWhatItRanAndTimedOnceFinished) {
  auto cluster = makeProfiledCluster();
  ASSERT_NE(cluster, nullptr);
  for (int r = 0; r < kProfilerRanks; ++r) ASSERT_TRUE(cluster->comm(r).enableProfiling(16).isOk());
  std::deque<std::vector<float>> data;
  const std::vector<std::size_t> counts = {256, 16384, 262144};
  for (std::size_t count : counts) allreduceEverywhere(*cluster, data, count);

  // Enqueued, not run: recorded, untimed.
  auto pending = cluster->comm(0).profile();
  ASSERT_TRUE(pending.isOk()) << pending.status().toString();
  ASSERT_EQ(pending->size(), counts.size());
  for (const OperationProfile& p : *pending) EXPECT_FALSE(p.timed);

  ASSERT_TRUE(cluster->runUntilIdle().isOk());
  for (int r = 0; r < kProfilerRanks; ++r) {
    auto records = cluster->comm(r).profile();
    ASSERT_TRUE(records.isOk()) << records.status().toString();
    ASSERT_EQ(records->size(), counts.size());
    for (std::size_t i = 0; i < counts.size(); ++i) {
      const OperationProfile& p = (*records)[i];
      EXPECT_EQ(p.sequence, i);
      EXPECT_EQ(p.count, counts[i]);
      EXPECT_EQ(p.bytes, counts[i] * sizeof(float));
      EXPECT_EQ(p.dtype, DataType::kFloat32);
      EXPECT_EQ(p.op, ReduceOp::kSum);
      EXPECT_NE(p.algorithm, Algorithm::kAuto) << "the algorithm that ran, not the request";
      EXPECT_GE(p.segments, 1);
      EXPECT_EQ(p.stream, 0);
      ASSERT_TRUE(p.timed) << "rank " << r << " op " << i;
      EXPECT_GT(p.duration_us, 0.0);
      EXPECT_DOUBLE_EQ(p.algbw_gbps, static_cast<double>(p.bytes) / p.duration_us / 1e3);
      EXPECT_DOUBLE_EQ(p.busbw_gbps, p.algbw_gbps * 2.0 * (kProfilerRanks - 1) / kProfilerRanks);
    }
    EXPECT_LT((*records)[0].duration_us, (*records)[2].duration_us) << "1 KiB cannot take as long as 1 MiB";
  }
  for (const auto& d : data) EXPECT_EQ(d.front(), static_cast<float>(kProfilerRanks)) << "profiling changed a result";

  auto summary = cluster->comm(0).profileSummary();
  ASSERT_TRUE(summary.isOk());
  auto records = cluster->comm(0).profile();
  ASSERT_TRUE(records.isOk());
  EXPECT_EQ(summary->operations, 3u);
  EXPECT_EQ(summary->timed, 3u);
  EXPECT_EQ(summary->dropped, 0u);
  double total = 0.0;
  std::uint64_t bytes = 0;
  for (const OperationProfile& p : *records) {
    total += p.duration_us;
    bytes += p.bytes;
  }
  EXPECT_DOUBLE_EQ(summary->total_us, total);
  EXPECT_EQ(summary->bytes, bytes);
  EXPECT_LE(summary->min_us, summary->median_us);
  EXPECT_LE(summary->median_us, summary->max_us);
  EXPECT_DOUBLE_EQ(summary->min_us, (*records)[0].duration_us);
  std::uint64_t by_algorithm = 0;
  for (const AlgorithmProfile& a : summary->by_algorithm) by_algorithm += a.operations;
  EXPECT_EQ(by_algorithm, 3u);
  const std::string text = describe(*summary);
  EXPECT_TRUE(contains(text, "3 operations held (3 timed, 0 older dropped)")) << text;
  EXPECT_TRUE(contains(text, std::string(algorithmName((*records)[0].algorithm)))) << text;
}

TEST(Profiler, TheRingKeepsTheMostRecentAndReenablingStartsAfresh) {
  auto cluster = makeProfiledCluster();
  ASSERT_NE(cluster, nullptr);
  for (int r = 0; r < kProfilerRanks; ++r) ASSERT_TRUE(cluster->comm(r).enableProfiling(2).isOk());
  std::deque<std::vector<float>> data;
  for (std::size_t count = 64; count <= 1024; count *= 2) allreduceEverywhere(*cluster, data, count);  // 5 ops
  ASSERT_TRUE(cluster->runUntilIdle().isOk());
  auto records = cluster->comm(2).profile();
  ASSERT_TRUE(records.isOk());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].sequence, 3u);
  EXPECT_EQ((*records)[0].count, 512u);
  EXPECT_EQ((*records)[1].sequence, 4u);
  EXPECT_TRUE((*records)[0].timed && (*records)[1].timed);
  auto summary = cluster->comm(2).profileSummary();
  ASSERT_TRUE(summary.isOk());
  EXPECT_EQ(summary->dropped, 3u);

  cluster->comm(2).disableProfiling();
  EXPECT_FALSE(cluster->comm(2).profiling());
  EXPECT_EQ(cluster->comm(2).profile().status().code(), ErrorCode::kUnavailable);
  ASSERT_TRUE(cluster->comm(2).enableProfiling(4).isOk());
  auto fresh = cluster->comm(2).profile();
  ASSERT_TRUE(fresh.isOk());
  EXPECT_TRUE(fresh->empty());
}

TEST(Profiler, AFailedOperationIsRecordedButNeverTimed) {
  auto cluster = makeProfiledCluster();
  ASSERT_NE(cluster, nullptr);
  for (int r = 0; r < kProfilerRanks; ++r) ASSERT_TRUE(cluster->comm(r).enableProfiling(8).isOk());
  cluster->world().faults().haltRank(2, 0);  // rank 2 never acts: the others time out
  std::deque<std::vector<float>> data;
  allreduceEverywhere(*cluster, data, 4096);
  EXPECT_FALSE(cluster->runUntilIdle().isOk());
  for (int r = 0; r < 2; ++r) {
    EXPECT_FALSE(cluster->comm(r).asyncError().isOk());
    auto records = cluster->comm(r).profile();
    ASSERT_TRUE(records.isOk()) << records.status().toString();
    ASSERT_EQ(records->size(), 1u);
    EXPECT_FALSE((*records)[0].timed) << "rank " << r;
    auto summary = cluster->comm(r).profileSummary();
    ASSERT_TRUE(summary.isOk());
    EXPECT_EQ(summary->timed, 0u);
    EXPECT_TRUE(contains(describe(*summary), "no operation timed yet")) << describe(*summary);
  }
}

// Through a transport decorator the marks reach the simulator (the wrapper forwards them); a transport
// without time marks makes enableProfiling fail with its name, and allreduce goes on unprofiled.
class ForwardingTransport final : public TransportWrapper {
 public:
  using TransportWrapper::TransportWrapper;
};

class NoClockTransport final : public TransportWrapper {
 public:
  using TransportWrapper::TransportWrapper;
  TransportCapabilities capabilities() override {
    TransportCapabilities inner = TransportWrapper::capabilities();
    inner.time_marks = nullptr;
    return inner;
  }
};

TEST(Profiler, WorksThroughADecoratorAndIsRefusedByATransportThatCannotTime) {
  auto wrapped = makeProfiledCluster([](const std::shared_ptr<sim::SimWorld>&, int, std::shared_ptr<Transport> t) {
    return std::shared_ptr<Transport>(std::make_shared<ForwardingTransport>(std::move(t)));
  });
  ASSERT_NE(wrapped, nullptr);
  for (int r = 0; r < kProfilerRanks; ++r) ASSERT_TRUE(wrapped->comm(r).enableProfiling(4).isOk());
  std::deque<std::vector<float>> data;
  allreduceEverywhere(*wrapped, data, 1024);
  ASSERT_TRUE(wrapped->runUntilIdle().isOk());
  auto records = wrapped->comm(1).profile();
  ASSERT_TRUE(records.isOk());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_TRUE((*records)[0].timed);

  auto blind = makeProfiledCluster([](const std::shared_ptr<sim::SimWorld>&, int, std::shared_ptr<Transport> t) {
    return std::shared_ptr<Transport>(std::make_shared<NoClockTransport>(std::move(t)));
  });
  ASSERT_NE(blind, nullptr);
  const Status s = blind->comm(0).enableProfiling();
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported) << s.toString();
  EXPECT_TRUE(contains(s.message(), "simulator cannot time operations")) << s.message();
  EXPECT_TRUE(contains(s.message(), "enableProfiling on rank 0")) << s.message();
  EXPECT_FALSE(blind->comm(0).profiling());
  allreduceEverywhere(*blind, data, 64);
  EXPECT_TRUE(blind->runUntilIdle().isOk());
  EXPECT_EQ(data.back().front(), static_cast<float>(kProfilerRanks));
}

}  // namespace
}  // namespace peerreduce
