// The tuning table the library ships (select/builtin_tuning.h): it parses, it holds the crossovers
// measured on 4 x H200 for 2 and 4 ranks, it applies only to that architecture, and a communicator on
// such a device chooses by it unless a tuning file replaces it.
#include "select/builtin_tuning.h"

#include <gtest/gtest.h>

#include <memory>

#include "peerreduce/communicator.h"
#include "sim_cluster.h"

namespace peerreduce {
namespace {

constexpr std::uint64_t kBuiltinTuningMiB = std::uint64_t{1} << 20;

TEST(BuiltinTuning, ParsesAndHoldsTheMeasuredCrossovers) {
  ASSERT_TRUE(TuningTable::parse(builtinTuningText()).isOk());
  const TuningTable& table = builtinTuningTable();
  EXPECT_EQ(table.lookup("sm_90", 4, 64 * 1024), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup("sm_90", 4, 1 * kBuiltinTuningMiB), Algorithm::kTwoShot);
  EXPECT_EQ(table.lookup("sm_90", 4, 4 * kBuiltinTuningMiB), Algorithm::kTwoShot);
  EXPECT_EQ(table.lookup("sm_90", 2, 4 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup("sm_90", 2, 16 * kBuiltinTuningMiB), Algorithm::kOneShot) << "pushing, from 2 MiB";
  EXPECT_EQ(table.lookup("sm_90", 2, 256 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup("sm_90", 4, 256 * kBuiltinTuningMiB), Algorithm::kTwoShot);
  // Two ranks' other collectives, measured on 2 x H200: broadcast's one-shot (lines to 1 MiB, pushed past
  // them, streamed past the scratch) at every size; all-gather's and reduce-scatter's one-shot at every size (lines to
  // 1 MiB blocks, the most a writer's lines hold at two ranks, pushed past them).
  EXPECT_EQ(table.lookup(Collective::kBroadcast, "sm_90", 2, 256 * 1024), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kBroadcast, "sm_90", 2, 1 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kBroadcast, "sm_90", 2, 1 * kBuiltinTuningMiB + kBuiltinTuningMiB / 8),
            Algorithm::kOneShot)
      << "the middle of 1 MiB's bucket, where the selector reads the row";
  // Past the lines the direct plan pushes, streamed through the scratch past it: the one-shot at every size.
  EXPECT_EQ(table.lookup(Collective::kBroadcast, "sm_90", 2, 1 * kBuiltinTuningMiB + kBuiltinTuningMiB / 4),
            Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kBroadcast, "sm_90", 2, 4 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kBroadcast, "sm_90", 2, 16 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kBroadcast, "sm_90", 2, 64 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kBroadcast, "sm_90", 2, 256 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kBroadcast, "sm_90", 4, 256 * kBuiltinTuningMiB), Algorithm::kRing)
      << "four ranks keep theirs";
  EXPECT_EQ(table.lookup(Collective::kAllGather, "sm_90", 2, 1 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kAllGather, "sm_90", 2, 256 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kReduceScatter, "sm_90", 2, 1 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kReduceScatter, "sm_90", 2, 2 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kReduceScatter, "sm_90", 2, 2 * kBuiltinTuningMiB + kBuiltinTuningMiB / 4),
            Algorithm::kOneShot);
  // Past the lines the direct plan pushes at two ranks, so the one-shot holds at every size.
  EXPECT_EQ(table.lookup(Collective::kReduceScatter, "sm_90", 2, 2 * kBuiltinTuningMiB + kBuiltinTuningMiB / 2),
            Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kReduceScatter, "sm_90", 2, 4 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kReduceScatter, "sm_90", 2, 256 * kBuiltinTuningMiB), Algorithm::kOneShot);
  EXPECT_EQ(table.lookup(Collective::kReduceScatter, "sm_90", 4, 256 * kBuiltinTuningMiB), Algorithm::kRing)
      << "four ranks keep theirs";
  EXPECT_FALSE(table.lookup(Collective::kReduceScatter, "sm_90", 8, 1 * kBuiltinTuningMiB).has_value());
  // Only what was measured: other worlds and devices keep the cost model.
  EXPECT_FALSE(table.lookup("sm_90", 8, 4096).has_value());
  EXPECT_FALSE(table.lookup("simulator", 4, 4096).has_value());
  EXPECT_FALSE(table.lookup("gfx90a", 4, 4096).has_value());
}

// The simulator, reporting itself as an H100 / H200.
class ReportsSm90 : public TransportWrapper {
 public:
  using TransportWrapper::TransportWrapper;
  TransportIdentity identity() const override {
    TransportIdentity inner = TransportWrapper::identity();
    inner.architecture = "sm_90";
    return inner;
  }
};

std::unique_ptr<sim::SimCluster> clusterOf(int ranks, bool sm90, const std::string& tuning_file = "") {
  Config config;
  config.memory.pool_bytes = std::size_t{8} << 20;
  config.scratch_bytes = std::size_t{2} << 20;
  config.tuning_file = tuning_file;
  auto cluster = sim::SimCluster::create(
      ranks, {}, config,
      [sm90](const std::shared_ptr<sim::SimWorld>&, int, std::shared_ptr<Transport> t) -> std::shared_ptr<Transport> {
        if (!sm90) return t;
        return std::make_shared<ReportsSm90>(std::move(t));
      });
  EXPECT_TRUE(cluster.isOk()) << cluster.status().toString();
  return cluster.isOk() ? std::move(cluster).value() : nullptr;
}

TEST(BuiltinTuning, ACommunicatorOnSm90ChoosesByItAndTheSimulatorDoesNot) {
  auto h200 = clusterOf(4, true);
  ASSERT_NE(h200, nullptr);
  for (const auto& [bytes, algorithm] :
       {std::pair{kBuiltinTuningMiB / 16, Algorithm::kOneShot}, std::pair{kBuiltinTuningMiB, Algorithm::kTwoShot}}) {
    auto report = h200->comm(0).explainSelection(bytes / sizeof(float), DataType::kFloat32);
    ASSERT_TRUE(report.isOk()) << report.status().toString();
    EXPECT_TRUE(report->tuned) << bytes;
    EXPECT_EQ(report->chosen, algorithm) << bytes;
  }
  auto simulated = clusterOf(4, false);
  ASSERT_NE(simulated, nullptr);
  auto report = simulated->comm(0).explainSelection(kBuiltinTuningMiB / sizeof(float), DataType::kFloat32);
  ASSERT_TRUE(report.isOk());
  EXPECT_FALSE(report->tuned) << "the simulator keeps the cost model's choices";
}

TEST(BuiltinTuning, ATuningFileReplacesIt) {
  const std::string path = ::testing::TempDir() + "/header_only.tuning";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("peerreduce-tuning 1\n", f);
    std::fclose(f);
  }
  auto h200 = clusterOf(4, true, path);
  ASSERT_NE(h200, nullptr);
  auto report = h200->comm(0).explainSelection(kBuiltinTuningMiB / sizeof(float), DataType::kFloat32);
  ASSERT_TRUE(report.isOk());
  EXPECT_FALSE(report->tuned) << "a table without entries leaves every choice to the cost model";
  std::remove(path.c_str());
}

}  // namespace
}  // namespace peerreduce
