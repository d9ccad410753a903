// RaceChecker on its own: vector clocks driven by hand exactly as the engine drives them (tick after
// every action, a signal carries the sender's clock, a satisfied wait joins it), so each kind of
// hazard can be produced on purpose and its report checked.
#include "race_checker.h"

#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace peerreduce::sim {
namespace {

using testing::contains;

std::string describe(const AccessSite& site) {
  return "R" + std::to_string(site.rank) + "/op" + std::to_string(site.op) + "/#" + std::to_string(site.step);
}

class RaceCheckerTest : public ::testing::Test {
 protected:
  static constexpr int kRanks = 3;
  RaceCheckerTest() : checker_(kRanks, describe) {
    // The engine's entry fence ticks every rank before its first access; so do we.
    for (int r = 0; r < kRanks; ++r) checker_.tick(r);
  }
  // `from` signals `to`, which waits for it: `to` is now ordered after everything `from` did.
  void signalAndWait(int from, int to) {
    checker_.tick(from);
    const VectorClock carried = checker_.clock(from);
    checker_.join(to, carried);
    checker_.tick(to);
  }
  void read(int rank, std::uint64_t op, int step, int owner, int slot) {
    checker_.read(rank, op, step, owner, slot);
    checker_.tick(rank);
  }
  void write(int rank, std::uint64_t op, int step, int owner, int slot) {
    checker_.write(rank, op, step, owner, slot);
    checker_.tick(rank);
  }
  const std::vector<std::string>& reports() const { return checker_.reports(); }
  std::string all() const {
    std::string out;
    for (const auto& r : reports()) out += r + "\n";
    return out;
  }

  RaceChecker checker_;
};

TEST_F(RaceCheckerTest, ReadOrderedAfterTheWriteBySignalAndWaitIsClean) {
  write(0, 0, 1, 0, 0);  // rank 0 fills its own slot 0
  signalAndWait(0, 1);
  signalAndWait(0, 2);
  read(1, 0, 3, 0, 0);
  read(2, 0, 3, 0, 0);
  // Both readers tell rank 0 they are done before it overwrites the slot.
  signalAndWait(1, 0);
  signalAndWait(2, 0);
  write(0, 0, 5, 0, 0);
  EXPECT_TRUE(reports().empty()) << all();
}

TEST_F(RaceCheckerTest, ReadNotOrderedAfterTheWriteIsReportedNamingBothSites) {
  write(0, 0, 1, 0, 2);
  read(1, 0, 4, 0, 2);  // no wait for rank 0's signal
  ASSERT_EQ(reports().size(), 1u) << all();
  const std::string& r = reports()[0];
  EXPECT_TRUE(contains(r, "read/write race on rank 0's scratch slot 2")) << r;
  EXPECT_TRUE(contains(r, "R1/op0/#4 is not ordered after R0/op0/#1")) << r;
}

TEST_F(RaceCheckerTest, OrderingIsTransitiveThroughAThirdRank) {
  write(0, 0, 1, 0, 0);
  signalAndWait(0, 1);
  signalAndWait(1, 2);  // rank 2 learns of rank 0's write through rank 1
  read(2, 0, 7, 0, 0);
  EXPECT_TRUE(reports().empty()) << all();
}

TEST_F(RaceCheckerTest, ReadOfDataNobodyWroteInThisOperationIsReported) {
  read(1, 0, 2, 0, 3);
  ASSERT_EQ(reports().size(), 1u) << all();
  EXPECT_TRUE(contains(reports()[0], "read of unwritten data on rank 0's scratch slot 3")) << reports()[0];
  EXPECT_TRUE(contains(reports()[0], "R1/op0/#2")) << reports()[0];
}

TEST_F(RaceCheckerTest, WriteNotOrderedAfterAPeersReadIsReported) {
  write(0, 0, 1, 0, 0);
  signalAndWait(0, 1);
  read(1, 0, 2, 0, 0);
  write(0, 0, 3, 0, 0);  // rank 0 overwrites while rank 1 may still be reading
  ASSERT_EQ(reports().size(), 1u) << all();
  EXPECT_TRUE(contains(reports()[0], "write/read race on rank 0's scratch slot 0")) << reports()[0];
  EXPECT_TRUE(contains(reports()[0], "R0/op0/#3 is not ordered after R1/op0/#2")) << reports()[0];
}

TEST_F(RaceCheckerTest, UnorderedWritesOfTheSameSlotAreReported) {
  write(1, 0, 1, 0, 5);
  write(2, 0, 1, 0, 5);
  ASSERT_EQ(reports().size(), 1u) << all();
  EXPECT_TRUE(contains(reports()[0], "write/write race on rank 0's scratch slot 5")) << reports()[0];
  EXPECT_TRUE(contains(reports()[0], "R2/op0/#1 is not ordered after R1/op0/#1")) << reports()[0];
}

TEST_F(RaceCheckerTest, DifferentSlotsOfOneOperationDoNotConflict) {
  write(0, 0, 1, 0, 0);
  write(1, 0, 1, 0, 1);
  write(2, 0, 1, 0, 2);
  EXPECT_TRUE(reports().empty()) << all();
}

TEST_F(RaceCheckerTest, ReadOfAnEarlierOperationsUnorderedWriteIsReportedAcrossOperations) {
  // Slot sizes differ between operations, so any slot of the same owner conflicts.
  write(1, 0, 1, 0, 0);
  write(0, 1, 0, 0, 4);  // rank 0 starts op 1 in its own slot 4, ordered after its own accesses only
  read(2, 1, 2, 0, 4);   // rank 2 in op 1: not ordered after rank 1's op-0 write nor rank 0's op-1 write
  const std::string text = all();
  EXPECT_TRUE(contains(text,
                       "read/write race across operations on rank 0's scratch slot 4: R2/op1/#2 is not "
                       "ordered after R1/op0/#1"))
      << text;
}

TEST_F(RaceCheckerTest, WriteAfterAnEarlierOperationsUnorderedAccessesIsReportedAcrossOperations) {
  write(1, 0, 1, 0, 0);
  read(2, 0, 2, 0, 1);   // also a read of unwritten data; ignored here
  write(0, 1, 0, 0, 0);  // op 1's first write, with no entry fence joining ranks 1 and 2
  const std::string text = all();
  EXPECT_TRUE(contains(text,
                       "write/write race across operations on rank 0's scratch slot 0: R0/op1/#0 is not "
                       "ordered after R1/op0/#1"))
      << text;
  EXPECT_TRUE(contains(text,
                       "write/read race across operations on rank 0's scratch slot 0: R0/op1/#0 is not "
                       "ordered after R2/op0/#2"))
      << text;
}

TEST_F(RaceCheckerTest, EntryFenceOrderingMakesTheNextOperationClean) {
  write(0, 0, 1, 0, 0);
  signalAndWait(0, 1);
  read(1, 0, 2, 0, 0);
  write(1, 0, 3, 1, 0);
  signalAndWait(1, 0);  // rank 1's done signal, joined by rank 0's next entry fence
  signalAndWait(0, 1);  // and rank 0's done signal for rank 1's memory
  write(0, 1, 0, 0, 0);
  write(1, 1, 0, 1, 0);
  EXPECT_TRUE(reports().empty()) << all();
}

TEST_F(RaceCheckerTest, ReportsStopAtTheCapAndCanBeCleared) {
  write(0, 0, 1, 0, 0);
  for (int i = 0; i < 200; ++i) read(1, 0, i, 0, 0);  // every read races with the same write
  for (int i = 0; i < 10; ++i) read(2, 0, i, 0, 9);   // unwritten reads are capped too
  EXPECT_EQ(reports().size(), 64u);
  checker_.clearReports();
  EXPECT_TRUE(reports().empty());
  read(2, 0, 50, 0, 0);
  EXPECT_EQ(reports().size(), 1u) << "clearing reports must not disable checking";
}

TEST_F(RaceCheckerTest, OnlyTheLastEightOperationsAreRememberedPerOwner) {
  // An unordered write in op 0, then eight more operations by rank 0 alone push op 0's shadow out:
  // the cross-operation check is bounded (memory stays constant), so the old write is forgotten.
  write(1, 0, 1, 0, 0);
  for (std::uint64_t op = 1; op <= 8; ++op) write(0, op, 0, 0, 1);
  ASSERT_FALSE(reports().empty());  // op 1's write races with rank 1's op-0 write
  checker_.clearReports();
  write(0, 9, 0, 0, 1);
  EXPECT_TRUE(reports().empty()) << all();
}

TEST_F(RaceCheckerTest, JoinTakesTheElementwiseMaximumOverTheCommonLength) {
  VectorClock other = {5, 0, 9, 100};  // one entry longer than the world: ignored
  checker_.join(1, other);
  EXPECT_EQ(checker_.clock(1), (VectorClock{5, 1, 9}));
}

}  // namespace
}  // namespace peerreduce::sim
