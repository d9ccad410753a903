// explainSelection's kernel_blocks (api/kernel_blocks.h): asked of the transport's KernelLaunches for the
// chosen plan and the operation's first segment, for allreduce and the other collectives; 0 on a
// transport without kernels; the capability's error returned, never a made-up number.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <vector>

#include "peerreduce/communicator.h"
#include "sim_cluster.h"

namespace peerreduce {
namespace {

// The simulator with a kernel-launch query that answers from the segment it is asked about.
class ReportsKernelBlocks : public TransportWrapper, private KernelLaunches {
 public:
  ReportsKernelBlocks(std::shared_ptr<Transport> inner, bool fail) : TransportWrapper(std::move(inner)), fail_(fail) {}
  TransportCapabilities capabilities() override {
    TransportCapabilities c = TransportWrapper::capabilities();
    c.kernel_launches = this;
    return c;
  }
  StatusOr<int> kernelBlocks(const std::shared_ptr<const Plan>& plan, std::size_t count,
                             std::size_t elem_size) override {
    if (fail_) return invalidArgumentError("no kernel for plan '" + plan->description + "'");
    std::lock_guard<std::mutex> lock(mutex_);
    asked_.push_back({plan->collective, count, elem_size});
    return static_cast<int>(1 + count % 97);
  }
  struct Question {
    Collective collective;
    std::size_t count;
    std::size_t elem_size;
  };
  std::vector<Question> asked() {
    std::lock_guard<std::mutex> lock(mutex_);
    return asked_;
  }

 private:
  bool fail_;
  std::mutex mutex_;
  std::vector<Question> asked_;
};

struct BlocksWorld {
  std::unique_ptr<sim::SimCluster> cluster;
  std::shared_ptr<ReportsKernelBlocks> rank0;
};

BlocksWorld worldOf(bool with_kernels, bool fail = false) {
  Config config;
  config.memory.pool_bytes = std::size_t{8} << 20;
  config.scratch_bytes = std::size_t{256} << 10;  // small: large operations run in segments
  BlocksWorld world;
  auto cluster = sim::SimCluster::create(
      4, {}, config,
      [&](const std::shared_ptr<sim::SimWorld>&, int rank, std::shared_ptr<Transport> t) -> std::shared_ptr<Transport> {
        if (!with_kernels) return t;
        auto wrapped = std::make_shared<ReportsKernelBlocks>(std::move(t), fail);
        if (rank == 0) world.rank0 = wrapped;
        return wrapped;
      });
  EXPECT_TRUE(cluster.isOk()) << cluster.status().toString();
  if (cluster.isOk()) world.cluster = std::move(cluster).value();
  return world;
}

TEST(KernelBlocks, ExplainSelectionAsksTheTransportAboutTheFirstSegment) {
  BlocksWorld world = worldOf(true);
  ASSERT_NE(world.cluster, nullptr);
  Communicator& comm = world.cluster->comm(0);
  auto small = comm.explainSelection(1000, DataType::kFloat32);
  ASSERT_TRUE(small.isOk()) << small.status().toString();
  EXPECT_EQ(small->kernel_blocks, 1 + 1000 % 97);
  ASSERT_FALSE(world.rank0->asked().empty());
  EXPECT_EQ(world.rank0->asked().back().count, 1000u);
  EXPECT_EQ(world.rank0->asked().back().elem_size, 4u);
  EXPECT_EQ(world.rank0->asked().back().collective, Collective::kAllReduce);
  // 64 MiB of fp32 runs in segments of the 256 KiB scratch: the question is about one segment.
  const std::size_t large = std::size_t{16} << 20;
  auto segmented = comm.explainSelection(large, DataType::kFloat32);
  ASSERT_TRUE(segmented.isOk());
  EXPECT_GT(segmented->candidates.front().segments, 1);
  const std::size_t first = world.rank0->asked().back().count;
  EXPECT_LT(first, large);
  EXPECT_GT(first, 0u);
  EXPECT_EQ(segmented->kernel_blocks, static_cast<int>(1 + first % 97));
  for (Collective c : {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    auto report = comm.explainSelection(c, 500, DataType::kBFloat16, 2);
    ASSERT_TRUE(report.isOk()) << c << ": " << report.status().toString();
    EXPECT_EQ(report->kernel_blocks, 1 + 500 % 97) << c;
    EXPECT_EQ(world.rank0->asked().back().collective, c);
    EXPECT_EQ(world.rank0->asked().back().elem_size, 2u) << c;
  }
}

TEST(KernelBlocks, ATransportWithoutKernelsReportsNone) {
  BlocksWorld world = worldOf(false);
  ASSERT_NE(world.cluster, nullptr);
  auto report = world.cluster->comm(0).explainSelection(1000, DataType::kFloat32);
  ASSERT_TRUE(report.isOk());
  EXPECT_EQ(report->kernel_blocks, 0);
  auto broadcast = world.cluster->comm(0).explainSelection(Collective::kBroadcast, 1000, DataType::kFloat32, 1);
  ASSERT_TRUE(broadcast.isOk());
  EXPECT_EQ(broadcast->kernel_blocks, 0);
}

TEST(KernelBlocks, TheTransportsErrorIsReturned) {
  BlocksWorld world = worldOf(true, true);
  ASSERT_NE(world.cluster, nullptr);
  auto report = world.cluster->comm(0).explainSelection(1000, DataType::kFloat32);
  ASSERT_FALSE(report.isOk());
  EXPECT_EQ(report.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(report.status().message().find("no kernel for plan"), std::string::npos) << report.status().message();
  auto gather = world.cluster->comm(0).explainSelection(Collective::kAllGather, 10, DataType::kFloat32, 0);
  ASSERT_FALSE(gather.isOk());
  EXPECT_NE(gather.status().message().find("no kernel for plan"), std::string::npos);
}

}  // namespace
}  // namespace peerreduce
