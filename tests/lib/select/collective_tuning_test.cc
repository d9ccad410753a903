// Tuning tables for every collective (select/tuning_table.h): seven-word entries name their collective,
// six-word entries stay allreduce's, a collective name or algorithm the collective lacks is refused with
// the line, sizes are nccl-tests' size column, and each collective's selector consults its own entries
// (an allreduce-only table leaves the others on the cost model).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "peerreduce/communicator.h"
#include "select/tuning_table.h"
#include "sim_cluster.h"
#include "text_contains.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

constexpr const char* kEveryCollective =
    "peerreduce-tuning 1\n"
    "entry sm_90 4 0 65536 one-shot\n"
    "entry reduce-scatter sm_90 4 0 65536 ring\n"
    "entry all-gather sm_90 4 0 65536 recursive-doubling\n"
    "entry broadcast sm_90 4 0 65536 tree\n"
    "entry allreduce sm_90 4 65536 131072 two-shot   # allreduce named: the same as six words\n";

TEST(CollectiveTuningTable, EachCollectiveLooksUpItsOwnEntries) {
  auto table = TuningTable::parse(kEveryCollective);
  ASSERT_TRUE(table.isOk()) << table.status().toString();
  EXPECT_EQ(table->lookup("sm_90", 4, 100), Algorithm::kOneShot) << "six words: allreduce";
  EXPECT_EQ(table->lookup(Collective::kAllReduce, "sm_90", 4, 70000), Algorithm::kTwoShot);
  EXPECT_EQ(table->lookup(Collective::kReduceScatter, "sm_90", 4, 100), Algorithm::kRing);
  EXPECT_EQ(table->lookup(Collective::kAllGather, "sm_90", 4, 100), Algorithm::kRecursiveDoubling);
  EXPECT_EQ(table->lookup(Collective::kBroadcast, "sm_90", 4, 100), Algorithm::kTree);
  EXPECT_EQ(table->lookup(Collective::kBroadcast, "sm_90", 4, 70000), std::nullopt)
      << "allreduce's range is not broadcast's";
  EXPECT_EQ(table->lookup(Collective::kReduceScatter, "sm_90", 2, 100), std::nullopt) << "another world size";
}

TEST(CollectiveTuningTable, AllreduceFormatsInTheSixWordFormFirstAndEverythingParsesBack) {
  auto table = TuningTable::parse(kEveryCollective);
  ASSERT_TRUE(table.isOk());
  const std::string text = table->format();
  EXPECT_EQ(text,
            "peerreduce-tuning 1\n"
            "entry sm_90 4 0 65536 one-shot\n"
            "entry sm_90 4 65536 131072 two-shot\n"
            "entry reduce-scatter sm_90 4 0 65536 ring\n"
            "entry all-gather sm_90 4 0 65536 recursive-doubling\n"
            "entry broadcast sm_90 4 0 65536 tree\n");
  auto again = TuningTable::parse(text);
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_EQ(again->format(), text);
  ASSERT_EQ(again->entries().size(), 5u);
  EXPECT_EQ(again->entries()[4].collective, Collective::kBroadcast);
}

TEST(CollectiveTuningTable, BadCollectivesAndAlgorithmsTheCollectiveLacksNameTheLine) {
  const std::string h = "peerreduce-tuning 1\n";
  const struct {
    std::string text;
    const char* says;
  } cases[] = {
      {h + "entry allgather sm_90 4 0 1 ring\n", "tuning table line 2: unknown collective 'allgather'"},
      {h + "\nentry reduce_scatter sm_90 4 0 1 ring\n", "tuning table line 3: unknown collective 'reduce_scatter'"},
      {h + "entry broadcast sm_90 4 0 1 recursive-doubling\n", "line 2: broadcast has no recursive-doubling algorithm"},
      {h + "entry reduce-scatter sm_90 4 0 1 two-shot\n", "line 2: reduce-scatter has no two-shot algorithm"},
      {h + "entry all-gather sm_90 4 0 1 rabenseifner\n", "line 2: all-gather has no rabenseifner algorithm"},
      {h + "entry all-gather sm_90 4 0 1 auto\n", "line 2: an entry must name a concrete algorithm, not auto"},
      {h + "entry all-gather sm_90 0 0 1 ring\n", "line 2: world size 0 is outside 1..64"},
      {h + "entry all-gather sm_90 4 0 1 ring extra\n", "line 2: expected 'entry ARCH WORLD_SIZE"},
      {h + "entry broadcast sm_90 4 0 100 ring\nentry broadcast sm_90 4 50 200 tree\n",
       "tuning table: broadcast entries for sm_90 with 4 ranks overlap at [50, 100)"},
  };
  for (const auto& c : cases) {
    auto table = TuningTable::parse(c.text);
    ASSERT_FALSE(table.isOk()) << c.text;
    EXPECT_EQ(table.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(table.status().message(), c.says)) << c.text << "\n-> " << table.status().message();
  }
  // The same range for two collectives is no overlap.
  EXPECT_TRUE(TuningTable::parse(h + "entry a 2 0 100 ring\nentry broadcast a 2 0 100 ring\n"
                                     "entry all-gather a 2 0 100 ring\n")
                  .isOk());
}

TEST(CollectiveTuningTable, SizesAreNcclTestsSizeColumn) {
  EXPECT_EQ(tuningTableBytes(Collective::kAllReduce, 4, 1000), 1000u);
  EXPECT_EQ(tuningTableBytes(Collective::kBroadcast, 4, 1000), 1000u);
  EXPECT_EQ(tuningTableBytes(Collective::kReduceScatter, 4, 1000), 4000u) << "the send buffer";
  EXPECT_EQ(tuningTableBytes(Collective::kAllGather, 8, 1000), 8000u) << "the receive buffer";
  EXPECT_EQ(tuningTableBytes(Collective::kAllGather, 8, UINT64_MAX / 4), UINT64_MAX) << "saturates";
}

// A simulated world of four ranks (architecture "simulator") with the tuning file `text`.
class TunedWorld {
 public:
  explicit TunedWorld(const std::string& text) {
    path_ = ::testing::TempDir() + "/collective_tuning_" + std::to_string(::getpid()) + "_" + std::to_string(++files_) +
            ".tuning";
    if (std::FILE* f = std::fopen(path_.c_str(), "w")) {
      std::fputs(text.c_str(), f);
      std::fclose(f);
    }
    Config config;
    config.memory.pool_bytes = std::size_t{8} << 20;
    config.scratch_bytes = std::size_t{2} << 20;
    config.tuning_file = text.empty() ? "" : path_;
    auto made = sim::SimCluster::create(4, {}, config);
    EXPECT_TRUE(made.isOk()) << made.status().toString();
    if (made.isOk()) cluster_ = std::move(made).value();
  }
  ~TunedWorld() { std::remove(path_.c_str()); }

  SelectionReport explain(Collective collective, std::size_t count) {
    auto report = cluster_->comm(0).explainSelection(collective, count, DataType::kFloat32, 0);
    EXPECT_TRUE(report.isOk()) << report.status().toString();
    return report.isOk() ? *report : SelectionReport{};
  }
  bool ready() const { return cluster_ != nullptr; }

 private:
  static inline int files_ = 0;
  std::string path_;
  std::unique_ptr<sim::SimCluster> cluster_;
};

constexpr std::size_t kFloats8KiB = 2048;

TEST(CollectiveTuning, EachCollectivesSelectorTakesItsMeasuredChoice) {
  // Ring and tree are never the model's pick for 8 KiB blocks on a full mesh (one latency wins there).
  TunedWorld untuned("");
  TunedWorld tuned(
      "peerreduce-tuning 1\n"
      "entry reduce-scatter simulator 4 0 1048576 ring\n"
      "entry all-gather simulator 4 0 1048576 ring\n"
      "entry broadcast simulator 4 0 1048576 tree\n");
  ASSERT_TRUE(untuned.ready() && tuned.ready());
  for (const auto& [collective, measured] :
       {std::pair{Collective::kReduceScatter, Algorithm::kRing}, std::pair{Collective::kAllGather, Algorithm::kRing},
        std::pair{Collective::kBroadcast, Algorithm::kTree}}) {
    const SelectionReport model = untuned.explain(collective, kFloats8KiB);
    EXPECT_FALSE(model.tuned) << collective;
    EXPECT_NE(model.chosen, measured) << collective << ": the test needs the model to pick otherwise";
    const SelectionReport report = tuned.explain(collective, kFloats8KiB);
    EXPECT_TRUE(report.tuned) << collective;
    EXPECT_EQ(report.chosen, measured) << collective;
    EXPECT_FALSE(report.forced) << collective;
  }
  const SelectionReport allreduce = tuned.explain(Collective::kAllReduce, kFloats8KiB);
  EXPECT_FALSE(allreduce.tuned) << "a table without allreduce entries leaves allreduce on the model";
}

// Broadcast's two-shot (scatter, then all-gather) is chosen by measurement: a row naming it picks the
// cheapest of its stage variants where the model alone takes the one-round direct plan.
TEST(CollectiveTuning, ABroadcastRowCanNameTwoShot) {
  TunedWorld untuned("");
  TunedWorld tuned("peerreduce-tuning 1\nentry broadcast simulator 4 0 1048576 two-shot\n");
  ASSERT_TRUE(untuned.ready() && tuned.ready());
  const SelectionReport model = untuned.explain(Collective::kBroadcast, kFloats8KiB);
  EXPECT_NE(model.chosen, Algorithm::kTwoShot) << "the test needs the model to pick otherwise";
  const SelectionReport report = tuned.explain(Collective::kBroadcast, kFloats8KiB);
  EXPECT_TRUE(report.tuned);
  EXPECT_EQ(report.chosen, Algorithm::kTwoShot);
  EXPECT_TRUE(contains(report.plan, "broadcast two-shot from 0")) << report.plan;
  auto elsewhere = TuningTable::parse("peerreduce-tuning 1\nentry all-gather sm_90 4 0 1 two-shot\n");
  ASSERT_FALSE(elsewhere.isOk());
  EXPECT_TRUE(contains(elsewhere.status().message(), "line 2: all-gather has no two-shot algorithm"))
      << elsewhere.status().message();
}

TEST(CollectiveTuning, ReduceScatterRangesAreInSendBufferBytes) {
  // [0, 64 KiB) of send buffer: per-rank blocks below 16 KiB with four ranks.
  TunedWorld tuned("peerreduce-tuning 1\nentry reduce-scatter simulator 4 0 65536 ring\n");
  ASSERT_TRUE(tuned.ready());
  EXPECT_TRUE(tuned.explain(Collective::kReduceScatter, kFloats8KiB).tuned) << "8 KiB blocks: a 32 KiB send buffer";
  const SelectionReport beyond = tuned.explain(Collective::kReduceScatter, 4 * kFloats8KiB);
  EXPECT_FALSE(beyond.tuned) << "32 KiB blocks: a 128 KiB send buffer, outside the entry";
  // Broadcast's size is its buffer: the same 64 KiB entry covers a 32 KiB broadcast.
  TunedWorld broadcast("peerreduce-tuning 1\nentry broadcast simulator 4 0 65536 ring\n");
  ASSERT_TRUE(broadcast.ready());
  EXPECT_TRUE(broadcast.explain(Collective::kBroadcast, 4 * kFloats8KiB).tuned);
}

TEST(CollectiveTuning, AnAllreduceOnlyTableLeavesTheOtherCollectivesOnTheCostModel) {
  TunedWorld untuned("");
  TunedWorld allreduce_only("peerreduce-tuning 1\nentry simulator 4 0 1099511627776 ring\n");
  ASSERT_TRUE(untuned.ready() && allreduce_only.ready());
  const SelectionReport allreduce = allreduce_only.explain(Collective::kAllReduce, kFloats8KiB);
  EXPECT_TRUE(allreduce.tuned);
  EXPECT_EQ(allreduce.chosen, Algorithm::kRing);
  for (Collective c : {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    for (std::size_t count : {std::size_t{16}, kFloats8KiB, std::size_t{1} << 22}) {
      const SelectionReport with_table = allreduce_only.explain(c, count);
      EXPECT_FALSE(with_table.tuned) << c << " " << count;
      EXPECT_EQ(with_table.chosen, untuned.explain(c, count).chosen) << c << " " << count;
    }
  }
}

}  // namespace
}  // namespace peerreduce
