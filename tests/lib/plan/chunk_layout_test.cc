// ChunkLayout, scratch sizing, segmenting and the plan helpers of peerreduce/plan.h: chunks partition
// the count in order on aligned boundaries, scratch fits what a plan moves, segments fit the scratch,
// and plans describe themselves step by step.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "algorithms/algorithms.h"
#include "peerreduce/plan.h"
#include "plan/flag_epochs.h"
#include "plan/plan_builder.h"
#include "select/segmenting.h"

namespace peerreduce {
namespace {

template <typename T>
rc::Gen<T> uniform(rc::Gen<T> gen) {
  return rc::gen::resize(rc::kNominalSize, std::move(gen));
}

rc::Gen<std::size_t> genElemSize() { return uniform(rc::gen::element<std::size_t>(1, 2, 4, 8)); }

rc::Gen<std::size_t> genCount() {
  return uniform(rc::gen::weightedOneOf<std::size_t>({{1, rc::gen::just<std::size_t>(0)},
                                                      {4, rc::gen::inRange<std::size_t>(1, 300)},
                                                      {4, rc::gen::inRange<std::size_t>(300, 5000000)}}));
}

// Every concrete algorithm (all but kAuto).
rc::Gen<Algorithm> genAlgorithm() {
  return uniform(
      rc::gen::map(rc::gen::inRange(1, kBuiltAlgorithmCount), [](int v) { return static_cast<Algorithm>(v); }));
}

// The partition property: chunk c is [begin(c), begin(c) + size(c)), chunks follow one another
// from 0 to count with nothing left over, every boundary but `count` itself is a multiple of
// align_elems, no chunk exceeds the capacity, and align_elems elements span 16 bytes (or one element
// when elements are wider).
RC_GTEST_PROP(ChunkLayoutProperty, ChunksPartitionTheCountInOrderOnAlignedBoundaries, ()) {
  const std::size_t count = *genCount();
  const int chunks = *uniform(rc::gen::inRange(1, 65));
  const std::size_t elem = *genElemSize();
  const ChunkLayout layout = ChunkLayout::make(count, chunks, elem);
  RC_ASSERT(layout.count == count);
  RC_ASSERT(layout.num_chunks == chunks);
  RC_ASSERT(layout.align_elems == std::max<std::size_t>(1, 16 / elem));
  RC_ASSERT(layout.chunk_capacity % layout.align_elems == 0);
  std::size_t expected_begin = 0;
  for (int c = 0; c < chunks; ++c) {
    RC_ASSERT(layout.begin(c) == expected_begin);
    RC_ASSERT(layout.begin(c) == count || layout.begin(c) % layout.align_elems == 0);
    RC_ASSERT(layout.size(c) <= layout.chunk_capacity);
    expected_begin += layout.size(c);
  }
  RC_ASSERT(expected_begin == count);
  // Capacity is as small as alignment allows: one aligned unit less would not hold the count.
  if (layout.chunk_capacity >= layout.align_elems) {
    RC_ASSERT((layout.chunk_capacity - layout.align_elems) * static_cast<std::size_t>(chunks) < count);
  }
}

// Scratch fits: a slot holds a whole chunk, is 256-byte aligned, and is no larger than needed; and
// any count up to maxSegmentCount runs in the scratch it was computed for.
RC_GTEST_PROP(ChunkLayoutProperty, ScratchSlotsHoldAChunkAndSegmentsFitTheScratch, ()) {
  const Algorithm algorithm = *genAlgorithm();
  const int world = *uniform(rc::gen::inRange(1, 17));
  const std::size_t elem = *genElemSize();
  const std::size_t scratch = *uniform(rc::gen::inRange<std::size_t>(0, std::size_t{8} << 20));
  auto plan = buildPlan(PlanRequest{algorithm, world, false});
  RC_ASSERT(plan.isOk());
  const std::size_t count = *genCount();
  const ChunkLayout layout = ChunkLayout::make(count, plan->num_chunks, elem);
  const std::size_t slot = scratchSlotBytes(layout, elem);
  RC_ASSERT(slot % kScratchSlotAlignBytes == 0);
  RC_ASSERT(slot >= layout.chunk_capacity * elem);
  RC_ASSERT(slot < layout.chunk_capacity * elem + kScratchSlotAlignBytes);
  RC_ASSERT(scratchBytes(*plan, layout, elem) == static_cast<std::size_t>(plan->scratch_slots) * slot);

  const std::size_t segment = maxSegmentCount(*plan, elem, scratch);
  if (plan->scratch_slots == 0) {
    RC_ASSERT(segment == std::numeric_limits<std::size_t>::max());
    return;
  }
  // A segment fits exactly when every slot gets at least one 256-byte unit (which holds >= 16 bytes of
  // every dtype, i.e. one aligned group of elements).
  RC_ASSERT((segment > 0) == (scratch / static_cast<std::size_t>(plan->scratch_slots) >= kScratchSlotAlignBytes));
  if (segment == 0) return;
  const ChunkLayout largest = ChunkLayout::make(segment, plan->num_chunks, elem);
  RC_ASSERT(scratchBytes(*plan, largest, elem) <= scratch);
  const ChunkLayout smaller = ChunkLayout::make(std::min(count, segment), plan->num_chunks, elem);
  RC_ASSERT(scratchBytes(*plan, smaller, elem) <= scratch);
}

TEST(ChunkLayout, ClampsChunkCountAndElementSizeToOne) {
  const ChunkLayout layout = ChunkLayout::make(10, 0, 0);
  EXPECT_EQ(layout.num_chunks, 1);
  EXPECT_EQ(layout.align_elems, 16u);
  EXPECT_EQ(layout.chunk_capacity, 16u);
  EXPECT_EQ(layout.begin(0), 0u);
  EXPECT_EQ(layout.size(0), 10u);
}

TEST(ChunkLayout, TrailingChunksOfASmallCountAreEmpty) {
  // 5 fp32 elements over 4 chunks: alignment of 4 elements puts 4 in chunk 0, 1 in chunk 1, none after.
  const ChunkLayout layout = ChunkLayout::make(5, 4, 4);
  EXPECT_EQ(layout.chunk_capacity, 4u);
  EXPECT_EQ(layout.size(0), 4u);
  EXPECT_EQ(layout.size(1), 1u);
  EXPECT_EQ(layout.begin(2), 5u);
  EXPECT_EQ(layout.size(2), 0u);
  EXPECT_EQ(layout.size(3), 0u);
}

TEST(Segmenting, PlansWithoutScratchNeedNoSegmentsAndTinyScratchFitsNone) {
  const Plan single = buildSingleRankPlan(Algorithm::kOneShot, false);
  ASSERT_EQ(single.scratch_slots, 0);
  EXPECT_EQ(maxSegmentCount(single, 4, 0), std::numeric_limits<std::size_t>::max());
  const Plan ring = buildRingPlan(4, false);  // 8 slots
  ASSERT_EQ(ring.scratch_slots, 8);
  EXPECT_EQ(maxSegmentCount(ring, 4, 8 * kScratchSlotAlignBytes - 1), 0u);
  // Exactly one slot of 256 bytes each: 64 fp32 per chunk, 4 chunks.
  EXPECT_EQ(maxSegmentCount(ring, 4, 8 * kScratchSlotAlignBytes), 256u);
}

// ---- signal counts, descriptions, flag epochs -----------------------------------------------------

TEST(SignalCounts, CountsEverySignalPerHolderWriterAndFlag) {
  PlanBuilder b(Algorithm::kOneShot, 3, 1, 2, false);
  b.signal(0, 1, 1);
  b.signal(0, 1, 1);
  b.signal(2, 0, 1);
  const Plan plan = b.finish("hand-made");
  const auto counts = signalCounts(plan);
  ASSERT_EQ(counts.size(), 3u * 3u * 2u);
  auto at = [&](int holder, int writer, int flag) { return counts[(holder * 3 + writer) * 2 + flag]; };
  EXPECT_EQ(at(1, 0, 1), 2u);
  EXPECT_EQ(at(0, 2, 1), 1u);
  EXPECT_EQ(at(0, 1, 1), 0u);
  EXPECT_EQ(plan.signal_counts, counts) << "finish() must store the counts";
}

// Bug: signalCounts indexed its table with the signal's peer and flag unchecked, so a plan with a
// signal to a rank or flag out of range (one the verifier exists to report) wrote out of bounds.
TEST(SignalCounts, IgnoresSignalsToOutOfRangePeersOrFlagsInsteadOfWritingOutOfBounds) {
  Plan plan = buildOneShotPlan(2, false);
  Step bad;
  bad.kind = StepKind::kSignal;
  for (auto [peer, flag] : {std::pair{5, 1}, std::pair{-1, 1}, std::pair{1, 9}, std::pair{1, -2}}) {
    bad.peer = peer;
    bad.flag = flag;
    plan.programs[0].steps.push_back(bad);
  }
  EXPECT_EQ(signalCounts(plan), plan.signal_counts) << "the out-of-range signals count nowhere";
}

TEST(DescribeStep, WritesEveryKindOfStep) {
  PlanBuilder b(Algorithm::kTwoShot, 2, 2, 2, false);
  b.copy(0, 1, inputOf(0), scratchOf(0, 3));
  const BufferRef sources[2] = {scratchOf(0, 1), scratchOf(1, 1)};
  b.reduce(0, 1, sources, outputOf(0), true);
  b.signal(0, 1, 1);
  b.waitForAll(1, 0, 1);
  const Plan plan = b.finish("hand-made");
  const RankProgram& r0 = plan.programs[0];
  EXPECT_EQ(describeStep(r0, r0.steps[0]), "copy c1 [in0] -> s0.3");
  EXPECT_EQ(describeStep(r0, r0.steps[1]), "reduce c1 [s0.1 s1.1] -> out0 final");
  EXPECT_EQ(describeStep(r0, r0.steps[2]), "signal r1 flag 0") << "the done signal after the last access of rank 1";
  EXPECT_EQ(describeStep(r0, r0.steps[3]), "signal r1 flag 1");
  const RankProgram& r1 = plan.programs[1];
  EXPECT_EQ(describeStep(r1, r1.steps[0]), "wait r0 flag 1 >= 1");
  EXPECT_EQ(describeRankProgram(r1, 1), "r1 #0 wait r0 flag 1 >= 1\n");
  EXPECT_EQ(describeRankProgram(r0, 0),
            "r0 #0 copy c1 [in0] -> s0.3\nr0 #1 reduce c1 [s0.1 s1.1] -> out0 final\nr0 #2 signal r1 flag 0\n"
            "r0 #3 signal r1 flag 1\n");
}

// Descriptions are for failures, so they must cope with broken steps without reading out of bounds.
TEST(DescribeStep, MarksSourcesOutsideTheListAndUnknownKinds) {
  RankProgram program;
  program.sources = {inputOf(0)};
  Step step;
  step.kind = StepKind::kReduce;
  step.chunk = 2;
  step.src_begin = 0;
  step.src_count = 3;
  step.dst = outputOf(0);
  EXPECT_EQ(describeStep(program, step), "reduce c2 [in0 ? ?] -> out0");
  step.kind = static_cast<StepKind>(9);
  EXPECT_EQ(describeStep(program, step), "invalid step");
}

// Bug: describeRef left its buffer uninitialised for a buffer kind outside the enum, so describing a
// corrupt step (as failure messages do) printed stack garbage.
TEST(DescribeStep, UnknownBufferKindIsShownAsAQuestionMarkNotGarbage) {
  RankProgram program;
  program.sources = {BufferRef{1, static_cast<BufferKind>(7), 0}};
  Step step;
  step.kind = StepKind::kCopy;
  step.src_count = 1;
  step.dst = BufferRef{0, static_cast<BufferKind>(8), 0};
  EXPECT_EQ(describeStep(program, step), "copy c0 [?] -> ?");
}

TEST(FlagEpochs, BasesGrowBySignalsReceivedAndTheFenceFollowsTheDoneFlag) {
  const Plan plan = buildOneShotPlan(3, false);  // every rank signals every other once on flags 0 and 1
  FlagEpochs epochs(3, 1);
  for (int writer = 0; writer < 3; ++writer) EXPECT_EQ(epochs.fence(writer), 0u);
  epochs.advance(plan);
  epochs.advance(plan);
  EXPECT_EQ(epochs.base(0, kDoneFlag), 2u);
  EXPECT_EQ(epochs.base(2, kFirstAlgorithmFlag), 2u);
  EXPECT_EQ(epochs.base(1, kFirstAlgorithmFlag), 0u) << "a rank never signals itself";
  EXPECT_EQ(epochs.fence(0), epochs.base(0, kDoneFlag));
  // A plan with stale (short) counts only advances what it has counts for, instead of reading past them.
  Plan stale = plan;
  stale.signal_counts.resize(2);
  FlagEpochs other(3, 1);
  other.advance(stale);
  EXPECT_EQ(other.base(2, kFirstAlgorithmFlag), 0u);
}

}  // namespace
}  // namespace peerreduce
