// A plan file on a communicator (PEERREDUCE_PLAN_FILE, api/user_plan.h): it runs its collective for the
// sizes the settings give and where the tuning table names "user", in the placements where it verified,
// and the built-in choice runs everywhere else; a file that is unreadable, for another world, refused by
// the verifier on the agreed links or too large for the scratch fails creation naming the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "algorithms/algorithms.h"
#include "collective_case.h"
#include "peerreduce/communicator.h"
#include "plan/plan_text.h"
#include "sim_cluster.h"
#include "test_world.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

// A file under the test's temporary folder, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    // The process id too: ctest runs each test in a process of its own, in parallel, whose counters all
    // start at 1.
    path_ = ::testing::TempDir() + "/plan_file_test_" + std::to_string(::getpid()) + "_" + std::to_string(++files_) +
            ".plan";
    if (std::FILE* f = std::fopen(path_.c_str(), "w")) {
      std::fputs(text.c_str(), f);
      std::fclose(f);
    }
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int files_ = 0;
  std::string path_;
};

// A shipped plan written as a plan file, under a name of its own.
std::string planText(Collective collective, Algorithm algorithm, int n, bool in_place = false, int root = 0) {
  PlanRequest request{algorithm, n, in_place};
  request.collective = collective;
  request.root = root;
  Plan plan = buildPlan(request).value();
  plan.description = "my " + std::string(collectiveName(collective)) + " plan";
  return formatPlanText(plan);
}

Config withPlan(const std::string& path, std::size_t min_bytes, std::size_t max_bytes) {
  Config config;
  config.memory.pool_bytes = std::size_t{16} << 20;
  config.scratch_bytes = std::size_t{4} << 20;
  config.plan_file = path;
  config.plan_min_bytes = min_bytes;
  config.plan_max_bytes = max_bytes;
  return config;
}

SelectionReport explain(sim::SimCluster& cluster, Collective collective, std::size_t bytes, int root = 0) {
  auto report = cluster.comm(0).explainSelection(collective, bytes / 4, DataType::kFloat32, root);
  EXPECT_TRUE(report.isOk()) << report.status().toString();
  return report.isOk() ? *report : SelectionReport{};
}

TEST(PlanFile, RunsInItsSizeRangeAndIsListedBesideTheBuiltIns) {
  TempFile file(planText(Collective::kAllReduce, Algorithm::kRing, 4));
  auto cluster = sim::SimCluster::create(4, {}, withPlan(file.path(), 64 << 10, 1 << 20));
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  for (std::size_t bytes : {std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{512} << 10, std::size_t{1} << 20,
                            std::size_t{8} << 20}) {
    const SelectionReport report = explain(**cluster, Collective::kAllReduce, bytes);
    const bool inside = bytes >= (64 << 10) && bytes < (1 << 20);
    EXPECT_EQ(report.chosen == Algorithm::kUser, inside) << bytes;
    EXPECT_EQ(report.plan_file, inside) << bytes;
    EXPECT_FALSE(report.tuned);
    if (inside) {
      EXPECT_EQ(report.plan, "my allreduce plan");
    }
    int listed = 0;
    for (const AlgorithmEstimate& c : report.candidates) listed += c.algorithm == Algorithm::kUser ? 1 : 0;
    EXPECT_EQ(listed, 1) << "the plan is priced at every size, chosen or not";
  }
}

TEST(PlanFile, ItsOperationsGiveTheReferenceResultInBothPlacements) {
  TempFile file(planText(Collective::kAllReduce, Algorithm::kRing, 4));
  auto world = testing::makeSimTestWorld(4, {}, withPlan(file.path(), 0, 0));
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  for (bool in_place : {false, true}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax}) {
      testing::AllreduceCase c;
      c.world_size = 4;
      c.count = 10007;
      c.op = op;
      c.in_place = in_place;
      const auto outcome = testing::runAllreduceCase(**world, c);
      EXPECT_TRUE(outcome.ok) << c.describe() << ": " << outcome.problem;
    }
  }
}

// The hardware stage compares every case with the simulator running the same settings: with a plan file,
// the simulator must run the file too (a plan file is never forced, so the settings carry it, not the
// algorithm).
TEST(PlanFile, TheHardwareStagesComparisonWithTheSimulatorRunsThePlanFileToo) {
  TempFile file(planText(Collective::kAllReduce, Algorithm::kRing, 4));
  auto world = testing::makeSimTestWorld(4, {}, withPlan(file.path(), 0, 0));
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  testing::AllreduceCase c;
  c.world_size = 4;
  c.count = 5003;
  const testing::CaseOutcome outcome = testing::runAllreduceCase(**world, c);
  ASSERT_TRUE(outcome.ok) << outcome.problem;
  EXPECT_EQ(testing::compareWithSimulator(**world, c, outcome), "");
}

TEST(PlanFile, ATuningTableEntryNamingUserChoosesIt) {
  TempFile file(planText(Collective::kAllReduce, Algorithm::kRing, 4));
  TempFile table("peerreduce-tuning 1\nentry simulator 4 0 8192 user\n");
  // The settings' range lies beyond every size asked here: only the table chooses the plan.
  Config config = withPlan(file.path(), std::size_t{1} << 40, 0);
  config.tuning_file = table.path();
  auto cluster = sim::SimCluster::create(4, {}, config);
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  const SelectionReport small = explain(**cluster, Collective::kAllReduce, 4096);
  EXPECT_EQ(small.chosen, Algorithm::kUser);
  EXPECT_TRUE(small.tuned);
  EXPECT_FALSE(small.plan_file);
  EXPECT_NE(explain(**cluster, Collective::kAllReduce, 16384).chosen, Algorithm::kUser);
}

TEST(PlanFile, OtherCollectivesRunTheirOwnPlanFileAndBroadcastOnlyFromItsRoot) {
  for (Collective collective : {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    const int root = collective == Collective::kBroadcast ? 2 : 0;
    TempFile file(planText(collective, Algorithm::kRing, 4, false, root));
    auto world = testing::makeSimTestWorld(4, {}, withPlan(file.path(), 0, 0));
    ASSERT_TRUE(world.isOk()) << world.status().toString();
    testing::CollectiveCase c;
    c.collective = collective;
    c.world_size = 4;
    c.count = 3001;
    c.root = root;
    const auto outcome = testing::runCollectiveCase(**world, c);
    EXPECT_TRUE(outcome.ok) << c.describe() << ": " << outcome.problem;
    auto cluster = sim::SimCluster::create(4, {}, withPlan(file.path(), 0, 0));
    ASSERT_TRUE(cluster.isOk());
    EXPECT_EQ(explain(**cluster, collective, 4096, root).chosen, Algorithm::kUser) << collectiveName(collective);
    EXPECT_NE(explain(**cluster, Collective::kAllReduce, 4096).chosen, Algorithm::kUser) << "another collective";
    if (collective == Collective::kBroadcast) {
      EXPECT_NE(explain(**cluster, collective, 4096, 0).chosen, Algorithm::kUser) << "another root";
    }
  }
}

TEST(PlanFile, APlacementWhoseStepsDoNotVerifyKeepsTheBuiltInChoice) {
  // Each rank folds its own input into its output first and then reads its send buffer again: fine out of
  // place, but in place the second read sees the partial result (the verifier refuses it).
  const std::string text =
      "peerreduce-plan 1\nname reads its input twice\ncollective allreduce\nworld 2\nchunks 1\nslots 1\nflags 2\n"
      "rank 0\n  reduce c0 [in0] -> out0\n  copy c0 [in0] -> s0.0\n  signal r1 flag 1\n  wait r1 flag 1 >= 1\n"
      "  reduce c0 [s0.0 s1.0] -> out0 final\n  signal r1 flag 0\n"
      "rank 1\n  reduce c0 [in1] -> out1\n  copy c0 [in1] -> s1.0\n  signal r0 flag 1\n  wait r0 flag 1 >= 1\n"
      "  reduce c0 [s0.0 s1.0] -> out1 final\n  signal r0 flag 0\nend\n";
  TempFile file(text);
  auto cluster = sim::SimCluster::create(2, {}, withPlan(file.path(), 0, 0));
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  const SelectionReport report = explain(**cluster, Collective::kAllReduce, 4096);
  EXPECT_EQ(report.chosen, Algorithm::kUser);
  bool said = false;
  for (const std::string& why : report.excluded) said = said || contains(why, "user: in place the steps do not verify");
  EXPECT_TRUE(said);
  auto world = testing::makeSimTestWorld(2, {}, withPlan(file.path(), 0, 0));
  ASSERT_TRUE(world.isOk());
  testing::AllreduceCase c;
  c.world_size = 2;
  c.count = 999;
  c.in_place = true;  // runs the built-in choice
  EXPECT_TRUE(testing::runAllreduceCase(**world, c).ok);
  c.in_place = false;  // runs the file
  EXPECT_TRUE(testing::runAllreduceCase(**world, c).ok);
}

TEST(PlanFile, CreationFailsNamingTheFileForEveryBadFile) {
  const std::string ring4 = planText(Collective::kAllReduce, Algorithm::kRing, 4);
  std::string no_wait = ring4;
  no_wait.erase(no_wait.find("  wait"), no_wait.find('\n', no_wait.find("  wait")) - no_wait.find("  wait") + 1);
  const struct {
    std::string text;
    int world;
    std::string mask;
    std::string says;
  } cases[] = {
      {ring4, 8, "", "is written for 4 ranks; this communicator has 8"},
      {"peerreduce-plan 1\nworld x\nend\n", 4, "", "plan line 2: world size 'x' is not a whole number"},
      {no_wait, 4, "", "does not verify on this topology"},
      {ring4, 4, "0-1", "there is no link"},
  };
  for (const auto& c : cases) {
    TempFile file(c.text);
    Config config = withPlan(file.path(), 0, 0);
    config.link_mask = c.mask;
    auto cluster = sim::SimCluster::create(c.world, {}, config);
    ASSERT_FALSE(cluster.isOk()) << c.says;
    EXPECT_EQ(cluster.status().code(), ErrorCode::kInvalidArgument) << cluster.status().toString();
    EXPECT_TRUE(contains(cluster.status().message(), file.path())) << cluster.status().toString();
    EXPECT_TRUE(contains(cluster.status().message(), c.says)) << cluster.status().toString();
  }
  Config missing = withPlan("/nonexistent/my.plan", 0, 0);
  auto cluster = sim::SimCluster::create(2, {}, missing);
  ASSERT_FALSE(cluster.isOk());
  EXPECT_TRUE(contains(cluster.status().message(), "PEERREDUCE_PLAN_FILE")) << cluster.status().toString();
}

TEST(PlanFile, APlanThatCannotFitTheScratchIsRefusedAtCreation) {
  // 4096 slots of at least 256 bytes: 1 MiB, above the smallest scratch.
  TempFile file(
      "peerreduce-plan 1\ncollective allreduce\nworld 1\nchunks 1\nslots 4096\nflags 1\n"
      "rank 0\n  reduce c0 [in0] -> out0 final\nend\n");
  Config config = withPlan(file.path(), 0, 0);
  config.scratch_bytes = kMinScratchBytes;
  auto cluster = sim::SimCluster::create(1, {}, config);
  ASSERT_FALSE(cluster.isOk());
  EXPECT_EQ(cluster.status().code(), ErrorCode::kOutOfMemory) << cluster.status().toString();
  EXPECT_TRUE(contains(cluster.status().message(), "4096 scratch slots")) << cluster.status().toString();
}

TEST(PlanFile, UserIsNeverForced) {
  for (Collective collective :
       {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    Config config;
    config.algorithmSettingOf(collective) = Algorithm::kUser;
    const Status status = config.validate();
    EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(status.message(), std::string(collectiveName(collective)) +
                                               " algorithm 'user' cannot be forced; name the plan file with "
                                               "PEERREDUCE_PLAN_FILE"))
        << status.toString();
  }
}

TEST(PlanFile, TheRangeMustBeOrdered) {
  Config config = withPlan("x.plan", 4096, 4096);
  const Status status = config.validate();
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(contains(status.message(), "PEERREDUCE_PLAN_MAX_BYTES 4096 must be above PEERREDUCE_PLAN_MIN_BYTES"));
  EXPECT_TRUE(withPlan("x.plan", 4096, 0).validate().isOk()) << "0: no upper bound";
  auto from_env = Config::fromEnvironment(Config{}, [](const char* name) -> const char* {
    if (std::string(name) == "PEERREDUCE_PLAN_FILE") return "a.plan";
    if (std::string(name) == "PEERREDUCE_PLAN_MIN_BYTES") return "64K";
    if (std::string(name) == "PEERREDUCE_PLAN_MAX_BYTES") return "1M";
    return nullptr;
  });
  ASSERT_TRUE(from_env.isOk()) << from_env.status().toString();
  EXPECT_EQ(from_env->plan_file, "a.plan");
  EXPECT_EQ(from_env->plan_min_bytes, 65536u);
  EXPECT_EQ(from_env->plan_max_bytes, 1048576u);
  EXPECT_NE(from_env->fingerprint(), Config{}.fingerprint()) << "ranks must agree on the plan file";
  EXPECT_EQ(Config{}.fingerprint(), Config{}.fingerprint());
}

}  // namespace
}  // namespace peerreduce
