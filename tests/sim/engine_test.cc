// SimEngine through SimWorld and its transports: creation, the symmetric-memory handshake, every
// rejected submission, bounded waits in virtual time (timeouts name rank, peer and step), abort,
// collective synchronize on threads, and the statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>

#include "algorithms/algorithms.h"
#include "peerreduce/communicator.h"
#include "sim_cluster.h"
#include "sim_test_util.h"

namespace peerreduce::testing {
namespace {

using std::chrono::milliseconds;

std::shared_ptr<const Plan> sharedPlan(Algorithm algorithm, int n, bool in_place = false) {
  auto plan = buildPlan({algorithm, n, in_place});
  EXPECT_TRUE(plan.isOk()) << plan.status().toString();
  return std::make_shared<const Plan>(*plan);
}

// A two-rank plan written by hand: rank 0 sends `done_signals` done signals to rank 1 and touches no
// data; rank 1 copies its input to its output. Enough to drive the entry fence precisely.
std::shared_ptr<const Plan> fencePlan(int done_signals) {
  Plan plan;
  plan.algorithm = Algorithm::kOneShot;
  plan.world_size = 2;
  plan.num_chunks = 1;
  plan.num_flags = 1;
  plan.description = "hand-written fence plan";
  plan.programs.resize(2);
  for (int i = 0; i < done_signals; ++i) {
    Step s;
    s.kind = StepKind::kSignal;
    s.peer = 1;
    s.flag = kDoneFlag;
    plan.programs[0].steps.push_back(s);
  }
  Step copy;
  copy.kind = StepKind::kCopy;
  copy.dst = BufferRef{1, BufferKind::kOutput, 0};
  copy.src_begin = 0;
  copy.src_count = 1;
  plan.programs[1].sources.push_back(BufferRef{1, BufferKind::kInput, 0});
  plan.programs[1].steps.push_back(copy);
  plan.signal_counts = signalCounts(plan);
  return std::make_shared<const Plan>(std::move(plan));
}

void expectError(const Status& status, ErrorCode code, std::initializer_list<const char*> parts) {
  EXPECT_EQ(status.code(), code) << status.toString();
  for (const char* part : parts)
    EXPECT_TRUE(contains(status.message(), part)) << "'" << part << "' missing in: " << status.toString();
}

// ---------------------------------------------------------------------------------------------------
// SimWorld::create

TEST(SimWorldCreate, RejectsWorldSizesOutsideOneToSixtyFour) {
  for (int n : {0, -1, kMaxWorldSize + 1}) {
    auto world = sim::SimWorld::create(n);
    ASSERT_FALSE(world.isOk()) << n;
    expectError(world.status(), ErrorCode::kInvalidArgument, {"1..64"});
    EXPECT_TRUE(contains(world.status().message(), std::to_string(n)));
  }
  EXPECT_TRUE(sim::SimWorld::create(1).isOk());
  EXPECT_TRUE(sim::SimWorld::create(kMaxWorldSize).isOk());
}

TEST(SimWorldCreate, RejectsATopologyOfAnotherSize) {
  sim::SimOptions options;
  options.topology = Topology::fullMesh(3);
  auto world = sim::SimWorld::create(4, options);
  ASSERT_FALSE(world.isOk());
  expectError(world.status(), ErrorCode::kInvalidArgument, {"3 ranks", "world of 4"});
}

TEST(SimWorldCreate, RejectsANonPositiveOrNanWaitTimeout) {
  for (double timeout : {0.0, -5.0, std::numeric_limits<double>::quiet_NaN()}) {
    sim::SimOptions options;
    options.wait_timeout_us = timeout;
    auto world = sim::SimWorld::create(2, options);
    ASSERT_FALSE(world.isOk()) << timeout;
    expectError(world.status(), ErrorCode::kInvalidArgument, {"wait timeout must be positive"});
  }
}

TEST(SimWorldCreate, TransportsDescribeTheirRankWorldAndTopology) {
  sim::SimOptions options;
  options.seed = 99;
  auto world = sim::SimWorld::create(3, options);
  ASSERT_TRUE(world.isOk());
  EXPECT_EQ((*world)->worldSize(), 3);
  EXPECT_EQ((*world)->options().seed, 99u);
  for (int r = 0; r < 3; ++r) {
    auto t = (*world)->transport(r);
    EXPECT_EQ(t->name(), "simulator");
    EXPECT_EQ(t->rank(), r);
    EXPECT_EQ(t->worldSize(), 3);
    // Default topology: a full mesh of the world's size.
    EXPECT_EQ(t->topology().worldSize(), 3);
    for (int p = 0; p < 3; ++p) EXPECT_TRUE(t->topology().canAccess(r, p));
    EXPECT_NE((*world)->bootstrap(r), nullptr);
    EXPECT_TRUE(t->asyncError().isOk());
  }

  // A given topology is what the transports report, missing links included.
  Topology partial = Topology::fullMesh(3);
  partial.setBidirectional(0, 2, LinkInfo{});
  sim::SimOptions custom;
  custom.topology = partial;
  auto other = sim::SimWorld::create(3, custom);
  ASSERT_TRUE(other.isOk());
  EXPECT_FALSE((*other)->transport(0)->topology().canAccess(0, 2));
  EXPECT_EQ((*other)->transport(1)->topology().describe(), partial.describe());
}

// ---------------------------------------------------------------------------------------------------
// openSymmetric / connectPeers

TEST(SimEngineHandshake, OpeningSymmetricMemoryTwiceIsRejected) {
  auto world = *sim::SimWorld::create(2);
  ASSERT_TRUE(world->transport(1)->openSymmetric(4096).isOk());
  auto again = world->transport(1)->openSymmetric(4096);
  ASSERT_FALSE(again.isOk());
  expectError(again.status(), ErrorCode::kInvalidArgument, {"rank 1", "already opened"});
}

TEST(SimEngineHandshake, ARegionTheHostCannotMapIsOutOfMemoryNamingTheSetting) {
  auto world = *sim::SimWorld::create(2);
  auto huge = world->transport(0)->openSymmetric(std::numeric_limits<std::size_t>::max() - 4095);
  ASSERT_FALSE(huge.isOk());
  expectError(huge.status(), ErrorCode::kOutOfMemory, {"simulated rank 0", "PEERREDUCE_POOL_BYTES"});
  // Nothing was kept: the rank can still open a region it can have.
  EXPECT_TRUE(world->transport(0)->openSymmetric(4096).isOk());
}

class SimEngineConnect : public ::testing::Test {
 protected:
  void SetUp() override {
    world_ = *sim::SimWorld::create(2);
    for (int r = 0; r < 2; ++r) records_.push_back(world_->transport(r)->openSymmetric(4096)->record);
  }
  std::shared_ptr<sim::SimWorld> world_;
  std::vector<std::vector<std::byte>> records_;
};

// Field offsets of the simulator's record (magic u32, rank u32, world id u64, bytes u64).
constexpr std::size_t kMagicOffset = 0;
constexpr std::size_t kRankOffset = 4;
constexpr std::size_t kBytesOffset = 16;

TEST_F(SimEngineConnect, WrongNumberOfRecordsIsRejected) {
  records_.pop_back();
  expectError(world_->transport(0)->connectPeers(records_), ErrorCode::kInvalidArgument,
              {"rank 0", "got 1 peer records", "world of 2"});
}

TEST_F(SimEngineConnect, TruncatedRecordIsCorruptNamingThePeer) {
  records_[1].resize(records_[1].size() - 1);
  expectError(world_->transport(0)->connectPeers(records_), ErrorCode::kCorrupt, {"rank 0 mapping rank 1", "bytes"});
}

TEST_F(SimEngineConnect, RecordWithoutTheMagicIsCorruptNamingThePeer) {
  records_[1][kMagicOffset] ^= std::byte{0xff};
  expectError(world_->transport(0)->connectPeers(records_), ErrorCode::kCorrupt, {"rank 0 mapping rank 1", "magic"});
}

TEST_F(SimEngineConnect, RecordOfAnotherWorldIsCorruptNamingThePeer) {
  auto other = *sim::SimWorld::create(2);
  auto foreign = other->transport(1)->openSymmetric(4096)->record;
  records_[1] = foreign;
  expectError(world_->transport(0)->connectPeers(records_), ErrorCode::kCorrupt,
              {"rank 0 mapping rank 1", "belongs to simulated world"});
}

TEST_F(SimEngineConnect, RecordNamingAnotherRankIsCorruptNamingThePeer) {
  std::swap(records_[0], records_[1]);
  expectError(world_->transport(1)->connectPeers(records_), ErrorCode::kCorrupt,
              {"rank 1 mapping rank 0", "names rank 1"});
}

TEST_F(SimEngineConnect, RecordOfTheWrongSizeIsCorruptNamingThePeer) {
  std::uint64_t bytes = 0;
  std::memcpy(&bytes, records_[1].data() + kBytesOffset, sizeof(bytes));
  bytes += 1;
  std::memcpy(records_[1].data() + kBytesOffset, &bytes, sizeof(bytes));
  expectError(world_->transport(0)->connectPeers(records_), ErrorCode::kCorrupt,
              {"rank 0 mapping rank 1", "describes 4097 bytes", "region is 4096"});
}

TEST(SimEngineHandshake, RecordOfAPeerThatNeverOpenedItsMemoryIsCorrupt) {
  auto world = *sim::SimWorld::create(2);
  auto mine = world->transport(0)->openSymmetric(4096)->record;
  // A well-formed record claiming to be rank 1's, although rank 1 has no region yet.
  auto forged = mine;
  const std::uint32_t one = 1;
  std::memcpy(forged.data() + kRankOffset, &one, sizeof(one));
  expectError(world->transport(0)->connectPeers({mine, forged}), ErrorCode::kCorrupt,
              {"rank 0 mapping rank 1", "region is 0"});
}

// ---------------------------------------------------------------------------------------------------
// submit

TEST(SimEngineSubmit, BeforeConnectIsUnavailable) {
  auto world = *sim::SimWorld::create(2);
  (void)*world->transport(0)->openSymmetric(4096);
  std::vector<float> in(4, 1.0f), out(4);
  ExecutionRequest r;
  r.plan = sharedPlan(Algorithm::kOneShot, 2);
  r.send = in.data();
  r.recv = out.data();
  r.count = 4;
  r.layout = ChunkLayout::make(4, 1, sizeof(float));
  expectError(world->transport(0)->submit(r, nullptr), ErrorCode::kUnavailable, {"rank 0", "before its peers"});
}

TEST(SimEngineSubmit, RejectsAMissingPlanOrOneForAnotherWorld) {
  auto c = makeConnectedWorld(2);
  auto good = c.request(0, sharedPlan(Algorithm::kOneShot, 2), 16);

  auto r = good;
  r.plan = nullptr;
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"rank 0", "plan is missing"});

  r = c.request(0, sharedPlan(Algorithm::kOneShot, 3), 16);
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"another world size"});

  Plan short_plan = *good.plan;
  short_plan.programs.pop_back();  // claims two ranks, programs for one
  r = good;
  r.plan = std::make_shared<const Plan>(short_plan);
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"another world size"});

  Plan many_flags = *good.plan;
  many_flags.num_flags = 9;
  r = good;
  r.plan = std::make_shared<const Plan>(many_flags);
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"uses 9 flags", "at most 8"});
}

// The simulator enforces its own links: a plan that reads, writes or signals over a link the topology
// lacks is refused before it runs, whatever the planner believed.
TEST(SimEngineSubmit, RefusesAPlanThatNeedsAMissingLink) {
  sim::SimOptions options;
  auto ring = Topology::fullMesh(4);
  ring.setLink(0, 2, LinkInfo{});
  ring.setLink(2, 0, LinkInfo{});
  options.topology = ring;
  auto c = makeConnectedWorld(4, options);
  auto r = c.request(0, sharedPlan(Algorithm::kOneShot, 4), 16);
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kUnavailable, {"rank 0", "needs link 0->2"});
  // A ring that only reads from its neighbours over present links runs.
  auto ring_plan = buildPlan(PlanRequest{Algorithm::kRing, 4, false, {0, 1, 2, 3}});
  ASSERT_TRUE(ring_plan.isOk());
  r = c.request(1, std::make_shared<const Plan>(*ring_plan), 16);
  EXPECT_TRUE(c.transport(1).submit(r, nullptr).isOk());
  // A step naming a rank outside the world is refused too.
  Plan stray = *sharedPlan(Algorithm::kOneShot, 4);
  stray.programs[3].sources[0].rank = 9;
  r = c.request(3, std::make_shared<const Plan>(stray), 16);
  expectError(c.transport(3).submit(r, nullptr), ErrorCode::kInvalidArgument, {"names rank 9"});
}

TEST(SimEngineSubmit, RejectsAnInvalidDtypeOrOp) {
  auto c = makeConnectedWorld(2);
  auto r = c.request(0, sharedPlan(Algorithm::kOneShot, 2), 16);
  r.dtype = static_cast<DataType>(77);
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"invalid dtype or op"});
  r = c.request(0, sharedPlan(Algorithm::kOneShot, 2), 16);
  r.op = static_cast<ReduceOp>(-1);
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"invalid dtype or op"});
}

TEST(SimEngineSubmit, RejectsAChannelOutsideTheCommunicatorsRange) {
  auto c = makeConnectedWorld(2);
  auto r = c.request(0, sharedPlan(Algorithm::kOneShot, 2), 16);
  r.channel = kMaxChannels;
  static_assert(kMaxChannels == 4, "the message below names channel 4");
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"channel 4", "outside 0..3"});
  r.channel = -1;
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"channel -1"});
}

// Batched requests (what Communicator::allreduceBatch submits): each malformed one is refused naming
// what was wrong, and a well-formed one reduces every item into its own output.
TEST(SimEngineSubmit, RefusesMalformedBatchesAndRunsAWellFormedOne) {
  auto c = makeConnectedWorld(2);
  const auto one_shot = sharedPlan(Algorithm::kOneShot, 2);
  std::vector<std::vector<float>> in(2, std::vector<float>(12, 1.0f));
  std::vector<std::vector<float>> out(2, std::vector<float>(12, 0.0f));
  auto batchOf = [&](int r) {
    return std::vector<BatchItem>{{in[r].data(), out[r].data(), 5}, {in[r].data() + 5, out[r].data() + 5, 7}};
  };
  auto items = batchOf(0);
  auto r = c.request(0, one_shot, 12);
  r.send = nullptr;
  r.recv = nullptr;
  r.batch = items;

  auto bad = r;
  bad.plan = sharedPlan(Algorithm::kRing, 2);
  bad.layout = ChunkLayout::make(12, bad.plan->num_chunks, sizeof(float));
  expectError(c.transport(0).submit(bad, nullptr), ErrorCode::kInvalidArgument,
              {"needs a one-shot or two-shot plan", "ring"});
  bad = r;
  bad.send = in[0].data();
  expectError(c.transport(0).submit(bad, nullptr), ErrorCode::kInvalidArgument, {"send and recv must be null"});
  auto null_item = items;
  null_item[1].recv = nullptr;
  bad = r;
  bad.batch = null_item;
  expectError(c.transport(0).submit(bad, nullptr), ErrorCode::kInvalidArgument, {"item 1 has a null buffer"});
  bad = r;
  bad.count = 11;
  bad.layout = ChunkLayout::make(11, one_shot->num_chunks, sizeof(float));
  expectError(c.transport(0).submit(bad, nullptr), ErrorCode::kInvalidArgument, {"add up to 12", "has 11"});
  std::vector<BatchItem> many(kMaxBatchItemsPerSubmit + 1, BatchItem{in[0].data(), out[0].data(), 0});
  bad = r;
  bad.batch = many;
  bad.count = 0;
  bad.layout = ChunkLayout::make(0, one_shot->num_chunks, sizeof(float));
  static_assert(kMaxBatchItemsPerSubmit == 64, "the message below names 65 items");
  expectError(c.transport(0).submit(bad, nullptr), ErrorCode::kInvalidArgument, {"batch of 65 items", "at most 64"});

  ASSERT_TRUE(c.transport(0).submit(r, nullptr).isOk());
  auto items1 = batchOf(1);
  auto r1 = c.request(1, one_shot, 12);
  r1.send = nullptr;
  r1.recv = nullptr;
  r1.batch = items1;
  ASSERT_TRUE(c.transport(1).submit(r1, nullptr).isOk());
  items.clear();  // the engine keeps its own copy of the table
  items1.clear();
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  for (int rank = 0; rank < 2; ++rank) {
    for (float x : out[rank]) EXPECT_EQ(x, 2.0f);
  }
}

// Time marks (the profiler's clock on the simulator): a mark on an idle rank is reached at once; after
// a queued operation, when it finishes, in virtual time; marks outside the reserved range are refused.
TEST(SimEngineTimeMarks, MarksAreReachedInOrderWithTheRanksWorkAndCheckTheirRange) {
  auto c = makeConnectedWorld(2);
  ASSERT_NE(c.transport(0).capabilities().time_marks, nullptr) << "the simulator can time operations";
  TimeMarks& t = *c.transport(0).capabilities().time_marks;
  expectError(t.reserveTimeMarks(0), ErrorCode::kInvalidArgument, {"zero time marks"});
  ASSERT_TRUE(t.reserveTimeMarks(4).isOk());
  expectError(t.markTime(4, nullptr).status(), ErrorCode::kInvalidArgument, {"time mark 4 of 4 reserved"});
  expectError(t.markedSpanUs(0, 9).status(), ErrorCode::kInvalidArgument, {"time marks 0, 9 of 4 reserved"});
  auto unset = t.markedSpanUs(2, 3);
  ASSERT_TRUE(unset.isOk());
  EXPECT_FALSE(unset->has_value()) << "marks never placed are pending";

  ASSERT_TRUE(*t.markTime(0, nullptr));
  const auto plan = sharedPlan(Algorithm::kOneShot, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, plan, 16), nullptr).isOk());
  ASSERT_TRUE(*t.markTime(1, nullptr));
  auto pending = t.markedSpanUs(0, 1);
  ASSERT_TRUE(pending.isOk());
  EXPECT_FALSE(pending->has_value()) << "the operation before mark 1 has not run";
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  auto span = t.markedSpanUs(0, 1);
  ASSERT_TRUE(span.isOk() && span->has_value());
  EXPECT_GT(**span, 0.0) << "the operation took virtual time";
  // Re-marking mark 0 on the now idle rank moves it to the rank's clock: the span becomes 0.
  ASSERT_TRUE(*t.markTime(0, nullptr));
  auto after = t.markedSpanUs(1, 0);
  ASSERT_TRUE(after.isOk() && after->has_value());
  EXPECT_EQ(**after, 0.0);
}

TEST(SimEngineSubmit, RejectsNullBuffersUnlessTheCountIsZero) {
  auto c = makeConnectedWorld(1);
  const auto plan = sharedPlan(Algorithm::kOneShot, 1);
  auto r = c.request(0, plan, 16);
  r.send = nullptr;
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"null buffer"});
  r = c.request(0, plan, 16);
  r.recv = nullptr;
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"null buffer"});
  // count 0 moves nothing, so null pointers are fine (as in MPI and NCCL).
  r = c.request(0, plan, 0);
  r.send = nullptr;
  r.recv = nullptr;
  ASSERT_TRUE(c.transport(0).submit(r, nullptr).isOk());
  EXPECT_TRUE(c.world->runUntilIdle().isOk());
  EXPECT_EQ(c.world->stats().operations, 1u);
}

TEST(SimEngineSubmit, ScratchTooSmallIsOutOfMemoryNamingTheSizes) {
  // Region of 1 KiB; one-shot over 2 ranks needs a slot of 4096 floats.
  auto c = makeConnectedWorld(2, {}, 1024, 4096);
  auto r = c.request(0, sharedPlan(Algorithm::kOneShot, 2), 4096);
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kOutOfMemory, {"rank 0", "16384 bytes", "has 1024"});
  // An offset past the end of the region is the same error, not an overflow.
  r = c.request(0, sharedPlan(Algorithm::kOneShot, 2), 1);
  r.scratch_offset = 4096;
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kOutOfMemory, {"at offset 4096", "has 1024"});
}

// Regression: the engine trusted request.layout, so a layout made for a larger count made the
// simulator read and write past the user's buffers (heap overflow), and one made for a smaller count
// (e.g. a default-constructed layout) silently left the output unwritten and reported success.
TEST(SimEngineSubmit, RegressionLayoutForAnotherCountOrChunkingIsRejected) {
  auto c = makeConnectedWorld(2);
  const auto plan = sharedPlan(Algorithm::kOneShot, 2);
  auto r = c.request(0, plan, 16);
  r.layout = ChunkLayout::make(1024 * 1024, plan->num_chunks, sizeof(float));
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"rank 0", "layout"});
  r.layout = ChunkLayout{};
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"layout"});
  r.layout = ChunkLayout::make(16, plan->num_chunks + 1, sizeof(float));
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"layout"});
  r.layout = ChunkLayout::make(16, plan->num_chunks, sizeof(float));
  r.layout.chunk_capacity = 1;  // chunks that do not cover the count
  expectError(c.transport(0).submit(r, nullptr), ErrorCode::kInvalidArgument, {"layout"});
}

TEST(SimEngineSubmit, RejectedRequestsLeaveTheWorldUsable) {
  auto c = makeConnectedWorld(2);
  const auto plan = sharedPlan(Algorithm::kTwoShot, 2);
  auto bad = c.request(0, plan, 100);
  bad.send = nullptr;
  ASSERT_FALSE(c.transport(0).submit(bad, nullptr).isOk());
  EXPECT_TRUE(c.transport(0).asyncError().isOk()) << "a rejected submit must not poison the rank";
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, plan, 100), nullptr).isOk());
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  for (int r = 0; r < 2; ++r) {
    for (std::size_t i = 0; i < 100; ++i) ASSERT_EQ(c.recv[static_cast<std::size_t>(r)][i], 3.0f) << r << " " << i;
    EXPECT_EQ(c.recv[static_cast<std::size_t>(r)][100], -1.0f) << "wrote past the count";
  }
}

// ---------------------------------------------------------------------------------------------------
// runUntilIdle: results, statistics, timeouts, abort

TEST(SimEngineRun, RunUntilIdleWithNothingSubmittedIsOkAndMovesNothing) {
  auto c = makeConnectedWorld(3);
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  const sim::SimStats stats = c.world->stats();
  EXPECT_EQ(stats.operations, 0u);
  EXPECT_EQ(stats.steps, 0u);
  EXPECT_EQ(stats.virtual_time_us, 0.0);
  ASSERT_EQ(stats.rank_time_us.size(), 3u);
  ASSERT_EQ(stats.link_bytes.size(), 9u);
  for (auto b : stats.link_bytes) EXPECT_EQ(b, 0u);
}

TEST(SimEngineRun, OneShotCountsEveryStepAndTheBytesEachRankReadsFromEachPeer) {
  constexpr int kRanks = 4;
  constexpr std::size_t kCount = 1000;
  auto c = makeConnectedWorld(kRanks);
  const auto plan = sharedPlan(Algorithm::kOneShot, kRanks);
  for (int r = 0; r < kRanks; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, plan, kCount), nullptr).isOk());
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  const sim::SimStats stats = c.world->stats();
  std::uint64_t plan_steps = 0;
  for (const auto& program : plan->programs) plan_steps += program.steps.size();
  EXPECT_EQ(stats.steps, plan_steps);
  EXPECT_EQ(stats.operations, static_cast<std::uint64_t>(kRanks));
  // One-shot: every rank reads each peer's whole published input exactly once.
  for (int from = 0; from < kRanks; ++from) {
    for (int to = 0; to < kRanks; ++to) {
      const auto v = stats.link_bytes[static_cast<std::size_t>(from * kRanks + to)];
      if (from == to) {
        EXPECT_GT(v, 0u);
      } else {
        EXPECT_EQ(v, kCount * sizeof(float)) << from << "->" << to;
      }
    }
  }
  EXPECT_GT(stats.virtual_time_us, 0.0);
  for (double t : stats.rank_time_us) EXPECT_LE(t, stats.virtual_time_us);
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(c.recv[static_cast<std::size_t>(r)][kCount - 1], 10.0f);
}

TEST(SimEngineRun, ManyConsecutiveOperationsOfMixedAlgorithmsStayCorrectAndRaceFree) {
  // More operations than the engine keeps plans for (16) and the race checker keeps shadows for (8),
  // alternating algorithms so every entry fence orders one algorithm's reads before another's writes.
  constexpr int kRanks = 3;
  constexpr int kOperations = 20;
  auto c = makeConnectedWorld(kRanks);
  const Algorithm algorithms[] = {Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing,
                                  Algorithm::kRecursiveDoubling, Algorithm::kRabenseifner};
  std::vector<std::vector<std::vector<float>>> outputs(kOperations);
  for (int i = 0; i < kOperations; ++i) {
    const auto plan = sharedPlan(algorithms[i % 5], kRanks);
    outputs[static_cast<std::size_t>(i)].assign(kRanks, std::vector<float>(300, -1.0f));
    for (int r = 0; r < kRanks; ++r) {
      auto req = c.request(r, plan, 300);
      req.recv = outputs[static_cast<std::size_t>(i)][static_cast<std::size_t>(r)].data();
      ASSERT_TRUE(c.transport(r).submit(req, nullptr).isOk());
    }
  }
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  EXPECT_TRUE(c.world->raceReports().empty()) << c.world->raceReports().front();
  EXPECT_EQ(c.world->stats().operations, static_cast<std::uint64_t>(kOperations * kRanks));
  for (const auto& op : outputs) {
    for (const auto& out : op) {
      for (float v : out) ASSERT_EQ(v, 6.0f);
    }
  }
}

TEST(SimEngineRun, RankThatNeverSubmitsTimesOutItsPeersInBoundedVirtualTime) {
  sim::SimOptions options;
  options.wait_timeout_us = 1000.0;
  auto c = makeConnectedWorld(3, options);
  const auto plan = sharedPlan(Algorithm::kOneShot, 3);
  for (int r : {0, 2}) ASSERT_TRUE(c.transport(r).submit(c.request(r, plan, 64), nullptr).isOk());
  const Status run = c.world->runUntilIdle();
  expectError(run, ErrorCode::kTimeout, {"rank 0 op 0", "step #", "rank 1 never sent the signal", "1000"});
  for (int r : {0, 2}) {
    expectError(c.transport(r).asyncError(), ErrorCode::kTimeout,
                {("rank " + std::to_string(r) + " op 0").c_str(), "wait", "rank 1 never sent"});
  }
  EXPECT_TRUE(c.transport(1).asyncError().isOk()) << "the idle rank itself did nothing wrong";
  // Virtual time jumped to the deadline: it ends just after the timeout, not at some wall-clock bound.
  const sim::SimStats stats = c.world->stats();
  EXPECT_GE(stats.virtual_time_us, 1000.0);
  EXPECT_LT(stats.virtual_time_us, 1100.0);
}

TEST(SimEngineRun, TimeoutIsStickyForAsyncErrorLaterSubmitsAndRuns) {
  sim::SimOptions options;
  options.wait_timeout_us = 50.0;
  auto c = makeConnectedWorld(2, options);
  const auto plan = sharedPlan(Algorithm::kOneShot, 2);
  ASSERT_TRUE(c.transport(0).submit(c.request(0, plan, 64), nullptr).isOk());
  const Status first = c.world->runUntilIdle();
  ASSERT_EQ(first.code(), ErrorCode::kTimeout) << first.toString();
  EXPECT_EQ(c.transport(0).asyncError(), first);
  EXPECT_EQ(c.transport(0).submit(c.request(0, plan, 64), nullptr), first);
  EXPECT_EQ(c.world->runUntilIdle(), first);
}

TEST(SimEngineRun, SignalArrivingAfterTheWaitDeadlineEndsTheWaitWithTimeout) {
  // Signals take 1 us to arrive over the default links; a 1 ns deadline cannot be met.
  sim::SimOptions options;
  options.wait_timeout_us = 0.001;
  auto c = makeConnectedWorld(2, options);
  const auto plan = sharedPlan(Algorithm::kOneShot, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, plan, 64), nullptr).isOk());
  expectError(c.world->runUntilIdle(), ErrorCode::kTimeout, {"rank 0 op 0 step #", "the signal from rank 1 came"});
  expectError(c.transport(1).asyncError(), ErrorCode::kTimeout, {"rank 1 op 0 step #", "the signal from rank 0 came"});
}

TEST(SimEngineRun, DoneSignalArrivingAfterTheDeadlineFailsTheEntryFence) {
  sim::SimOptions options;
  options.wait_timeout_us = 0.01;
  auto c = makeConnectedWorld(2, options);
  const auto plan = fencePlan(1);
  for (int op = 0; op < 2; ++op) {
    for (int r = 0; r < 2; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, plan, 64), nullptr).isOk());
  }
  // Rank 1's second operation must wait for rank 0's done signal of the first: it lands about 0.6 us
  // after rank 1 is ready, well past the deadline.
  expectError(c.world->runUntilIdle(), ErrorCode::kTimeout,
              {"rank 1 op 1 entry fence", "rank 0 finished with this rank's memory"});
  EXPECT_TRUE(c.transport(0).asyncError().isOk());
}

TEST(SimEngineRun, EntryFenceThatIsNeverSatisfiedTimesOutNamingThePeer) {
  // Ranks submitting different plans: rank 1 expects two done signals from rank 0, which sends one.
  // Its next operation's entry fence can never pass; the run must still end.
  sim::SimOptions options;
  options.wait_timeout_us = 500.0;
  auto c = makeConnectedWorld(2, options);
  ASSERT_TRUE(c.transport(0).submit(c.request(0, fencePlan(1), 8), nullptr).isOk());
  ASSERT_TRUE(c.transport(1).submit(c.request(1, fencePlan(2), 8), nullptr).isOk());
  ASSERT_TRUE(c.transport(1).submit(c.request(1, fencePlan(1), 8), nullptr).isOk());
  expectError(c.world->runUntilIdle(), ErrorCode::kTimeout,
              {"rank 1 op 1", "entry fence waiting for rank 0", "within 500"});
  EXPECT_EQ(c.world->stats().operations, 2u);  // rank 0's and rank 1's first
}

// Regression: a rank whose program has no steps (a legal plan: that rank has nothing to do) made the
// engine index past the end of its step list once the entry fence passed.
TEST(SimEngineRun, RegressionRankWithAnEmptyProgramCompletes) {
  auto c = makeConnectedWorld(2);
  const auto plan = fencePlan(0);  // rank 0: no steps at all
  ASSERT_TRUE(plan->programs[0].steps.empty());
  for (int op = 0; op < 2; ++op) {
    for (int r = 0; r < 2; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, plan, 8), nullptr).isOk());
  }
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  EXPECT_EQ(c.world->stats().operations, 4u);
  EXPECT_EQ(c.recv[1][7], 2.0f);
}

TEST(SimEngineRun, AbortEndsThePendingOperationWithAbortedAndPeersWithTimeout) {
  sim::SimOptions options;
  options.wait_timeout_us = 100.0;
  auto c = makeConnectedWorld(2, options);
  const auto plan = sharedPlan(Algorithm::kOneShot, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, plan, 64), nullptr).isOk());
  c.transport(1).abort();
  EXPECT_FALSE(c.world->runUntilIdle().isOk());
  expectError(c.transport(1).asyncError(), ErrorCode::kAborted, {"rank 1 op 0", "aborted by the application"});
  expectError(c.transport(0).asyncError(), ErrorCode::kTimeout, {"rank 1 never sent"});
  EXPECT_EQ(c.transport(1).submit(c.request(1, plan, 64), nullptr).code(), ErrorCode::kAborted);
  for (float v : c.recv[1]) ASSERT_EQ(v, -1.0f) << "an aborted operation must not have written its output";
}

TEST(SimEngineRun, ResetStatsDropsCountsRacesAndTraceButKeepsWorking) {
  sim::SimOptions options;
  options.record_trace = true;
  auto c = makeConnectedWorld(2, options);
  const std::uint64_t empty_fingerprint = c.world->traceFingerprint();
  // A plan without its data waits: races guaranteed.
  Plan broken = *sharedPlan(Algorithm::kOneShot, 2);
  for (auto& program : broken.programs) {
    std::erase_if(program.steps, [](const Step& s) { return s.kind == StepKind::kWait && s.flag != kDoneFlag; });
  }
  auto shared = std::make_shared<const Plan>(broken);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, shared, 64), nullptr).isOk());
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  ASSERT_FALSE(c.world->raceReports().empty());
  ASSERT_NE(c.world->traceFingerprint(), empty_fingerprint);
  const double time_before = c.world->stats().virtual_time_us;

  c.world->resetStats();
  const sim::SimStats stats = c.world->stats();
  EXPECT_EQ(stats.operations, 0u);
  EXPECT_EQ(stats.steps, 0u);
  for (auto b : stats.link_bytes) EXPECT_EQ(b, 0u);
  EXPECT_TRUE(c.world->raceReports().empty());
  EXPECT_EQ(c.world->traceFingerprint(), empty_fingerprint);
  EXPECT_EQ(c.world->chromeTraceJson().find("\"ph\":\"X\""), std::string::npos);

  // Clocks and epochs stay: the next (correct) operation runs after the earlier one in virtual time.
  const auto good = sharedPlan(Algorithm::kOneShot, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, good, 64), nullptr).isOk());
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  EXPECT_TRUE(c.world->raceReports().empty()) << c.world->raceReports().front();
  EXPECT_EQ(c.world->stats().operations, 2u);
  EXPECT_GT(c.world->stats().virtual_time_us, time_before);
}

TEST(SimEngineRun, RaceReportsDescribeBothStepsOfTheRace) {
  Plan broken = *sharedPlan(Algorithm::kOneShot, 2);
  auto& steps = broken.programs[1].steps;
  std::erase_if(steps, [](const Step& s) { return s.kind == StepKind::kWait && s.flag != kDoneFlag; });
  auto c = makeConnectedWorld(2);
  auto shared = std::make_shared<const Plan>(broken);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, shared, 64), nullptr).isOk());
  ASSERT_TRUE(c.world->runUntilIdle().isOk());
  const auto races = c.world->raceReports();
  ASSERT_FALSE(races.empty());
  // Rank 1 reduces rank 0's scratch without waiting for rank 0's copy into it.
  const std::string& report = races.front();
  EXPECT_TRUE(contains(report, "rank 0's scratch slot 0")) << report;
  EXPECT_TRUE(contains(report, "rank 1 op 0 step #")) << report;
  EXPECT_TRUE(contains(report, "reduce")) << report;
}

// Small scratch (creation is faster) and a wall-clock bound for the threaded tests.
Config shortTimeout(milliseconds timeout) {
  Config config;
  config.timeout = timeout;
  config.scratch_bytes = kMinScratchBytes;
  return config;
}

Config shortTimeoutConfig() { return shortTimeout(milliseconds(20000)); }

// ---------------------------------------------------------------------------------------------------
// SimCluster: creation errors come back from whichever layer found them

TEST(SimCluster, InvalidWorldSizeIsRejectedBeforeAnyThreadStarts) {
  auto cluster = sim::SimCluster::create(0, {}, Config{});
  ASSERT_FALSE(cluster.isOk());
  expectError(cluster.status(), ErrorCode::kInvalidArgument, {"simulated world of 0 ranks"});
}

TEST(SimCluster, InvalidConfigFailsEveryRanksCreationWithTheCause) {
  Config config;
  config.scratch_bytes = 1;
  auto cluster = sim::SimCluster::create(3, {}, config);
  ASSERT_FALSE(cluster.isOk());
  expectError(cluster.status(), ErrorCode::kInvalidArgument, {"scratch"});
}

TEST(SimCluster, CreatedClusterAllreducesFromOneDrivingThread) {
  auto cluster = sim::SimCluster::create(3, {}, shortTimeoutConfig());
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  EXPECT_EQ((*cluster)->size(), 3);
  EXPECT_EQ((*cluster)->worldPtr().get(), &(*cluster)->world());
  std::vector<std::vector<double>> data(3);
  for (int r = 0; r < 3; ++r) {
    data[static_cast<std::size_t>(r)].assign(50, 0.5 * (r + 1));
    auto& d = data[static_cast<std::size_t>(r)];
    ASSERT_TRUE((*cluster)->comm(r).allreduce(d.data(), d.data(), d.size(), DataType::kFloat64, ReduceOp::kMax).isOk());
  }
  ASSERT_TRUE((*cluster)->runUntilIdle().isOk());
  for (const auto& d : data) EXPECT_EQ(d[49], 1.5);
}

// ---------------------------------------------------------------------------------------------------
// synchronize: collective, on the ranks' own threads

TEST(SimEngineSync, EveryRankSynchronizingOnItsOwnThreadCompletesTheAllreduce) {
  constexpr int kRanks = 4;
  auto cluster = sim::SimCluster::create(kRanks, sim::SimOptions{}, shortTimeoutConfig());
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  std::vector<std::vector<std::int32_t>> send(kRanks), recv(kRanks);
  std::vector<Status> results(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    send[static_cast<std::size_t>(r)].assign(257, r + 1);
    recv[static_cast<std::size_t>(r)].assign(257, 0);
    threads.emplace_back([&, r] {
      const auto i = static_cast<std::size_t>(r);
      Communicator& comm = (*cluster)->comm(r);
      for (int it = 0; it < 3 && results[i].isOk(); ++it) {
        results[i] = comm.allreduce(send[i].data(), recv[i].data(), 257, DataType::kInt32, ReduceOp::kSum);
        if (results[i].isOk()) results[i] = comm.synchronize();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(results[static_cast<std::size_t>(r)].isOk())
        << r << ": " << results[static_cast<std::size_t>(r)].toString();
    for (auto v : recv[static_cast<std::size_t>(r)]) ASSERT_EQ(v, 10);
  }
  EXPECT_GT((*cluster)->world().stats().operations, 0u);
}

TEST(SimEngineSync, SingleRankSynchronizeRunsAtOnce) {
  auto c = makeConnectedWorld(1);
  ASSERT_TRUE(c.transport(0).submit(c.request(0, sharedPlan(Algorithm::kRing, 1), 32), nullptr).isOk());
  ASSERT_TRUE(c.transport(0).synchronize(nullptr, milliseconds(1000)).isOk());
  EXPECT_EQ(c.recv[0][31], 1.0f);
}

// Returns the comma-separated rank list of a synchronize timeout ("... for ranks 1,3; ...").
std::vector<int> missingRanks(const std::string& message) {
  std::vector<int> ranks;
  const std::string key = "for ranks ";
  auto at = message.find(key);
  if (at == std::string::npos) return ranks;
  at += key.size();
  while (at < message.size() && message[at] >= '0' && message[at] <= '9') {
    ranks.push_back(std::atoi(message.c_str() + at));
    while (at < message.size() && message[at] >= '0' && message[at] <= '9') ++at;
    if (at < message.size() && message[at] == ',') ++at;
  }
  return ranks;
}

TEST(SimEngineSync, RankThatNeverSynchronizesMakesTheOthersTimeOutNamingIt) {
  constexpr int kRanks = 4;
  constexpr int kMissing = 2;
  auto cluster = sim::SimCluster::create(kRanks, sim::SimOptions{}, shortTimeout(milliseconds(300)));
  ASSERT_TRUE(cluster.isOk()) << cluster.status().toString();
  std::vector<std::vector<float>> send(kRanks, std::vector<float>(64, 1.0f)), recv(kRanks, std::vector<float>(64));
  for (int r = 0; r < kRanks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    ASSERT_TRUE(
        (*cluster)->comm(r).allreduce(send[i].data(), recv[i].data(), 64, DataType::kFloat32, ReduceOp::kSum).isOk());
  }
  std::vector<Status> results(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    if (r == kMissing) continue;
    threads.emplace_back([&, r] { results[static_cast<std::size_t>(r)] = (*cluster)->comm(r).synchronize(); });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    if (r == kMissing) continue;
    const Status& s = results[static_cast<std::size_t>(r)];
    expectError(s, ErrorCode::kTimeout,
                {("simulated rank " + std::to_string(r)).c_str(), "300 ms", "every rank must call it"});
    const auto missing = missingRanks(s.message());
    EXPECT_NE(std::find(missing.begin(), missing.end(), kMissing), missing.end()) << s.message();
    EXPECT_EQ(std::find(missing.begin(), missing.end(), r), missing.end()) << "a rank that arrived is not missing";
  }
  // The timeout left no half-finished round behind: when every rank calls, the work completes. (Through
  // the transports, with a generous bound, so a slow thread start on a loaded machine cannot fail it.)
  threads.clear();
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      results[static_cast<std::size_t>(r)] =
          (*cluster)->world().transport(r)->synchronize(nullptr, milliseconds(20000));
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(results[static_cast<std::size_t>(r)].isOk()) << results[static_cast<std::size_t>(r)].toString();
    EXPECT_EQ(recv[static_cast<std::size_t>(r)][63], 4.0f);
  }
}

TEST(SimEngineSync, SynchronizeReturnsTheRanksOwnOperationError) {
  sim::SimOptions options;
  options.wait_timeout_us = 100.0;
  auto c = makeConnectedWorld(2, options);
  const auto plan = sharedPlan(Algorithm::kOneShot, 2);
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(c.transport(r).submit(c.request(r, plan, 64), nullptr).isOk());
  c.transport(0).abort();
  std::vector<Status> results(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    // Whichever rank arrives first: rank 0 ends with kAborted, rank 1 with kTimeout (its peer never
    // signals, or never joins the round).
    threads.emplace_back(
        [&, r] { results[static_cast<std::size_t>(r)] = c.transport(r).synchronize(nullptr, milliseconds(500)); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(results[0].code(), ErrorCode::kAborted) << results[0].toString();
  EXPECT_EQ(results[1].code(), ErrorCode::kTimeout) << results[1].toString();
}

// Regression: abort() only flagged the rank for the scheduler, so a rank blocked in synchronize waiting
// for peers that never came sat out its whole timeout and then reported kTimeout, although the
// Transport contract says abort makes every wait of the rank return promptly with kAborted.
TEST(SimEngineSync, RegressionAbortWakesARankWaitingInSynchronize) {
  auto c = makeConnectedWorld(2);
  ASSERT_TRUE(c.transport(0).submit(c.request(0, sharedPlan(Algorithm::kOneShot, 2), 16), nullptr).isOk());
  constexpr auto kTimeout = milliseconds(5000);
  Status result;
  const auto start = std::chrono::steady_clock::now();
  std::thread waiter([&] { result = c.transport(0).synchronize(nullptr, kTimeout); });
  std::this_thread::sleep_for(milliseconds(50));
  c.transport(0).abort();
  waiter.join();
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_LT(waited, kTimeout / 2) << "abort did not wake the waiting rank";
  expectError(result, ErrorCode::kAborted, {"simulated rank 0", "aborted"});
  // The aborted operation is over (later submits fail), and rank 1, left alone, times out rather than hangs.
  EXPECT_EQ(c.transport(0).asyncError().code(), ErrorCode::kAborted);
  EXPECT_EQ(c.transport(1).synchronize(nullptr, milliseconds(50)).code(), ErrorCode::kTimeout);
}

}  // namespace
}  // namespace peerreduce::testing
