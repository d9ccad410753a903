// Ranks that disagree about an operation (sim/op_agreement.h): different counts, dtypes, ops or
// plans for the same operation number fail that operation with kMismatch on every rank, naming both
// ranks and the field, and nothing hangs. Also the agreement's bounded memory.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "algorithms/algorithms.h"
#include "op_agreement.h"
#include "sim_test_util.h"

namespace peerreduce::testing {
namespace {

std::shared_ptr<const Plan> planFor(Algorithm algorithm, int n) {
  auto plan = buildPlan(PlanRequest(algorithm, n));
  EXPECT_TRUE(plan.isOk()) << plan.status().toString();
  return std::make_shared<const Plan>(std::move(plan).value());
}

void expectMismatch(const Status& status, std::initializer_list<const char*> parts) {
  EXPECT_EQ(status.code(), ErrorCode::kMismatch) << status.toString();
  for (const char* part : parts)
    EXPECT_TRUE(contains(status.toString(), part)) << status.toString() << " lacks " << part;
}

// Rank 0 submits `first`, rank 1 `second`; then the world runs. Both ranks, and rank 2 when it
// submits the agreed request afterwards, must fail with a mismatch naming `parts`.
void expectEveryRankFails(ConnectedWorld& c, const ExecutionRequest& first, const ExecutionRequest& second,
                          std::initializer_list<const char*> parts) {
  ASSERT_TRUE(c.transport(0).submit(first, nullptr).isOk());
  expectMismatch(c.transport(1).submit(second, nullptr), parts);
  expectMismatch(c.transport(0).asyncError(), parts);
  expectMismatch(c.transport(1).asyncError(), parts);
  ExecutionRequest third = first;
  third.send = c.send[2].data();
  third.recv = c.recv[2].data();
  expectMismatch(c.transport(2).submit(third, nullptr), parts);
  expectMismatch(c.world->runUntilIdle(), parts);
  // Nothing ran: the outputs still hold their initial -1.
  for (int r = 0; r < 3; ++r) EXPECT_EQ(c.recv[static_cast<std::size_t>(r)][0], -1.0f) << "rank " << r;
}

TEST(PeerValidation, DifferentCountsFailEveryRankNamingBothRanksAndTheCounts) {
  auto c = makeConnectedWorld(3);
  const auto plan = planFor(Algorithm::kOneShot, 3);
  expectEveryRankFails(c, c.request(0, plan, 100), c.request(1, plan, 60),
                       {"operation 0", "rank 0 and rank 1", "count 100 vs 60"});
}

TEST(PeerValidation, DifferentDtypesFailEveryRankNamingTheDtypes) {
  auto c = makeConnectedWorld(3);
  const auto plan = planFor(Algorithm::kOneShot, 3);
  ExecutionRequest other = c.request(1, plan, 64);
  other.dtype = DataType::kInt32;  // same element size as fp32: only the agreement can tell
  expectEveryRankFails(c, c.request(0, plan, 64), other, {"rank 0 and rank 1", "dtype fp32 vs int32"});
}

TEST(PeerValidation, DifferentOpsFailEveryRankNamingTheOps) {
  auto c = makeConnectedWorld(3);
  const auto plan = planFor(Algorithm::kTwoShot, 3);
  expectEveryRankFails(c, c.request(0, plan, 64, ReduceOp::kSum), c.request(1, plan, 64, ReduceOp::kMax),
                       {"rank 0 and rank 1", "op sum vs max"});
}

TEST(PeerValidation, PlansOfDifferentAlgorithmsFailEveryRankNamingTheAlgorithms) {
  auto c = makeConnectedWorld(3);
  expectEveryRankFails(c, c.request(0, planFor(Algorithm::kOneShot, 3), 64),
                       c.request(1, planFor(Algorithm::kRing, 3), 64),
                       {"rank 0 and rank 1", "algorithm one-shot vs ring"});
}

TEST(PeerValidation, AMismatchInALaterOperationLeavesTheEarlierOnesCorrect) {
  auto c = makeConnectedWorld(2);
  const auto plan = planFor(Algorithm::kOneShot, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, plan, 32), nullptr).isOk());
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  for (int r = 0; r < 2; ++r) EXPECT_EQ(c.recv[static_cast<std::size_t>(r)][0], 3.0f) << "rank " << r;  // 1 + 2
  ASSERT_TRUE(c.transport(1).submit(c.request(1, plan, 32), nullptr).isOk());
  expectMismatch(c.transport(0).submit(c.request(0, plan, 16), nullptr),
                 {"operation 1", "rank 1 and rank 0", "count 32 vs 16"});
  expectMismatch(c.world->runUntilIdle(), {"operation 1"});
  expectMismatch(c.transport(1).asyncError(), {"operation 1"});
}

// A mismatch is sticky (sim/op_agreement.h says why): the next operation, with agreeing arguments on
// every rank, reports the same mismatch, and the message says the communicators must be recreated.
TEST(PeerValidation, AMismatchIsStickyAndSaysToRecreateTheCommunicators) {
  auto c = makeConnectedWorld(2);
  const auto plan = planFor(Algorithm::kOneShot, 2);
  ASSERT_TRUE(c.transport(0).submit(c.request(0, plan, 32), nullptr).isOk());
  expectMismatch(c.transport(1).submit(c.request(1, plan, 16), nullptr),
                 {"count 32 vs 16", "destroy them and create new ones"});
  expectMismatch(c.world->runUntilIdle(), {"count 32 vs 16"});
  for (int r = 0; r < 2; ++r) {
    expectMismatch(c.transport(r).submit(c.request(r, plan, 32), nullptr),
                   {"operation 0", "count 32 vs 16", "destroy them and create new ones"});
    expectMismatch(c.transport(r).asyncError(), {"count 32 vs 16"});
  }
  for (int r = 0; r < 2; ++r) EXPECT_EQ(c.recv[static_cast<std::size_t>(r)][0], -1.0f) << "rank " << r;
}

TEST(PeerValidation, AgreeingRanksRunManyOperationsWithoutError) {
  auto c = makeConnectedWorld(3);
  const auto plan = planFor(Algorithm::kRing, 3);
  for (int op = 0; op < 20; ++op) {
    for (int r = 0; r < 3; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, plan, 50), nullptr).isOk());
  }
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  for (int r = 0; r < 3; ++r) EXPECT_EQ(c.recv[static_cast<std::size_t>(r)][49], 6.0f) << "rank " << r;
}

// The ranks that already submitted the mismatched operation are failed at once, not left to wait
// out the timeout for signals their peers' plans will never send; rank 2, which never submits,
// changes nothing.
TEST(PeerValidation, AMismatchEndsWaitingRanksWithoutWaitingForTheTimeout) {
  sim::SimOptions options;
  options.wait_timeout_us = 1e6;
  auto c = makeConnectedWorld(3, options);
  const auto plan = planFor(Algorithm::kTwoShot, 3);
  ASSERT_TRUE(c.transport(0).submit(c.request(0, plan, 64), nullptr).isOk());
  expectMismatch(c.transport(1).submit(c.request(1, plan, 32), nullptr), {"count 64 vs 32"});
  expectMismatch(c.world->runUntilIdle(), {"count 64 vs 32"});
  EXPECT_LT(c.world->stats().virtual_time_us, options.wait_timeout_us);
}

TEST(OperationAgreement, EntriesAreDroppedOnceEveryRankRecordedThem) {
  sim::OperationAgreement agreement(3);
  const sim::OperationDescriptor d{64, DataType::kFloat32, ReduceOp::kSum, Algorithm::kRing, 3, 6, 2};
  for (std::uint64_t seq = 0; seq < 5000; ++seq) {
    for (int r = 0; r < 3; ++r) ASSERT_TRUE(agreement.record(r, seq, d).isOk());
  }
  EXPECT_EQ(agreement.entries(), 0u);
}

TEST(OperationAgreement, ARankFarAheadHoldsAtMostTheBoundedWindow) {
  sim::OperationAgreement agreement(2);
  const sim::OperationDescriptor d{64, DataType::kFloat32, ReduceOp::kSum, Algorithm::kRing, 2, 4, 2};
  for (std::uint64_t seq = 0; seq < 3 * sim::OperationAgreement::kMaxEntries; ++seq) {
    ASSERT_TRUE(agreement.record(0, seq, d).isOk());
  }
  EXPECT_EQ(agreement.entries(), sim::OperationAgreement::kMaxEntries);
  // The newest are still checked.
  sim::OperationDescriptor other = d;
  other.num_chunks = 3;
  const Status late = agreement.record(1, 3 * sim::OperationAgreement::kMaxEntries - 1, other);
  expectMismatch(late, {"rank 0 and rank 1", "plan chunks 2 vs 3"});
}

TEST(OperationAgreement, EveryFieldIsCompared) {
  const sim::OperationDescriptor base{64, DataType::kFloat32, ReduceOp::kSum, Algorithm::kRing, 2, 4, 2};
  EXPECT_EQ(sim::describeDifference(base, base), "");
  auto changed = [&](auto edit) {
    sim::OperationDescriptor d = base;
    edit(d);
    return sim::describeDifference(base, d);
  };
  EXPECT_EQ(changed([](auto& d) { d.count = 65; }), "count 64 vs 65");
  EXPECT_EQ(changed([](auto& d) { d.dtype = DataType::kBFloat16; }), "dtype fp32 vs bf16");
  EXPECT_EQ(changed([](auto& d) { d.op = ReduceOp::kAvg; }), "op sum vs avg");
  EXPECT_EQ(changed([](auto& d) { d.algorithm = Algorithm::kTree; }), "algorithm ring vs tree");
  EXPECT_EQ(changed([](auto& d) { d.num_chunks = 1; }), "plan chunks 2 vs 1");
  EXPECT_EQ(changed([](auto& d) { d.scratch_slots = 5; }), "plan scratch slots 4 vs 5");
  EXPECT_EQ(changed([](auto& d) { d.num_flags = 3; }), "plan flags 2 vs 3");
}

}  // namespace
}  // namespace peerreduce::testing
