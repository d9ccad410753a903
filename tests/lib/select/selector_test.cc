// The algorithm selector (select/selector.h): size buckets are monotonic and self-consistent, the
// table picks the cheapest candidate the cost model knows of, a single candidate is always chosen, and
// scratch too small for every candidate is a typed out-of-memory error.
#include "select/selector.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "peerreduce/config.h"
#include "select/segmenting.h"

namespace peerreduce {
namespace {

constexpr std::size_t kSelectorElem = 4;  // the element size the table is built for

std::vector<SelectorCandidate> allCandidates(int n) {
  std::vector<SelectorCandidate> candidates;
  for (int a = 1; a < kBuiltAlgorithmCount; ++a) {
    auto plan = buildPlan(PlanRequest{static_cast<Algorithm>(a), n, false});
    EXPECT_TRUE(plan.isOk());
    candidates.push_back({std::make_shared<const Plan>(std::move(plan).value())});
  }
  return candidates;
}

RC_GTEST_PROP(SelectorBuckets, BucketOfIsMonotonicInBytes, ()) {
  // Sizes spread over every octave, so the property sees every bucket boundary.
  const auto sized = [] {
    return rc::gen::map(rc::gen::pair(rc::gen::inRange(0, 64), rc::gen::arbitrary<std::size_t>()),
                        [](std::pair<int, std::size_t> p) {
                          return p.first == 64 ? p.second : p.second & ((std::size_t{1} << p.first) - 1);
                        });
  };
  const std::size_t a = *rc::gen::resize(rc::kNominalSize, sized());
  const std::size_t b = *rc::gen::resize(rc::kNominalSize, sized());
  const auto [low, high] = std::minmax(a, b);
  RC_ASSERT(AlgorithmSelector::bucketOf(low) <= AlgorithmSelector::bucketOf(high));
  RC_ASSERT(AlgorithmSelector::bucketOf(high) < kSelectorBuckets);
}

TEST(SelectorBuckets, QuarterOctavesFromFourBytesUpAndClampedAtTheTop) {
  EXPECT_EQ(AlgorithmSelector::bucketOf(0), 0);
  EXPECT_EQ(AlgorithmSelector::bucketOf(1), 0);
  EXPECT_EQ(AlgorithmSelector::bucketOf(2), 4);
  EXPECT_EQ(AlgorithmSelector::bucketOf(3), 6);
  // 1024..2047 is octave 10: quarters start at 1024, 1280, 1536, 1792.
  EXPECT_EQ(AlgorithmSelector::bucketOf(1024), 40);
  EXPECT_EQ(AlgorithmSelector::bucketOf(1279), 40);
  EXPECT_EQ(AlgorithmSelector::bucketOf(1280), 41);
  EXPECT_EQ(AlgorithmSelector::bucketOf(1536), 42);
  EXPECT_EQ(AlgorithmSelector::bucketOf(2047), 43);
  EXPECT_EQ(AlgorithmSelector::bucketOf(std::size_t{1} << kSelectorMaxLog2), kSelectorMaxLog2 * 4);
  EXPECT_EQ(AlgorithmSelector::bucketOf(std::size_t{1} << 50), kSelectorBuckets - 1);
  EXPECT_EQ(AlgorithmSelector::bucketOf(std::numeric_limits<std::size_t>::max()), kSelectorBuckets - 1);
}

// Every bucket's middle lies in that bucket (from 4 bytes up, where every quarter octave holds a whole
// number of bytes), and middles grow with the bucket.
TEST(SelectorBuckets, MiddleOfEveryBucketFallsInItAndMiddlesIncrease) {
  for (int bucket = 0; bucket < kSelectorBuckets; ++bucket) {
    const std::size_t middle = AlgorithmSelector::bucketMiddleBytes(bucket);
    if (bucket >= 2 * kSelectorBucketsPerOctave) {
      EXPECT_EQ(AlgorithmSelector::bucketOf(middle), bucket) << "middle " << middle;
    }
    if (bucket > 0) {
      EXPECT_GE(middle, AlgorithmSelector::bucketMiddleBytes(bucket - 1)) << bucket;
    }
  }
  EXPECT_EQ(AlgorithmSelector::bucketMiddleBytes(40), 1152u);  // 1024 x 1.125
}

// The table stands in for the cost model: at each bucket's middle it must choose what estimate()
// ranks cheapest. On several topologies, since where the crossovers fall depends on the links.
class SelectorTable : public ::testing::TestWithParam<int> {};

TEST_P(SelectorTable, ChoosesTheCheapestCandidateAtEveryBucketMiddle) {
  const int n = GetParam();
  for (const Topology& topology :
       {Topology::fullMesh(n), Topology::fullMesh(n, LinkInfo{LinkClass::kPcie, 3.0, 12.0})}) {
    auto selector = AlgorithmSelector::create(allCandidates(n), topology, kDefaultScratchBytes);
    ASSERT_TRUE(selector.isOk()) << selector.status().toString();
    for (int bucket = 2 * kSelectorBucketsPerOctave; bucket < kSelectorBuckets; ++bucket) {
      const std::size_t bytes = AlgorithmSelector::bucketMiddleBytes(bucket);
      const auto estimates = (*selector)->estimate(std::max<std::size_t>(1, bytes / kSelectorElem), kSelectorElem);
      ASSERT_EQ(estimates.size(), static_cast<std::size_t>(kBuiltAlgorithmCount - 1));
      EXPECT_EQ((*selector)->choose(bytes), estimates.front().algorithm)
          << topology.describe() << ", bucket " << bucket << " (" << bytes << " bytes): cheapest is "
          << algorithmName(estimates.front().algorithm) << " at " << estimates.front().predicted_us << " us";
      for (std::size_t i = 1; i < estimates.size(); ++i) {
        EXPECT_LE(estimates[i - 1].predicted_us, estimates[i].predicted_us) << "estimates are cheapest first";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, SelectorTable, ::testing::Values(2, 3, 4, 6, 8));

// The memo makes every rank of a process share one table; equal inputs must give the same object.
TEST(Selector, EqualInputsShareOneTable) {
  const Topology topology = Topology::fullMesh(5);
  auto first = AlgorithmSelector::create(allCandidates(5), topology, kDefaultScratchBytes);
  auto second = AlgorithmSelector::create(allCandidates(5), topology, kDefaultScratchBytes);
  auto other_scratch = AlgorithmSelector::create(allCandidates(5), topology, kDefaultScratchBytes / 2);
  ASSERT_TRUE(first.isOk() && second.isOk() && other_scratch.isOk());
  EXPECT_EQ(first->get(), second->get());
  EXPECT_NE(first->get(), other_scratch->get());
}

TEST(Selector, ASingleCandidateIsChosenForEverySize) {
  auto plan = buildPlan(PlanRequest{Algorithm::kRecursiveDoubling, 4, false});
  ASSERT_TRUE(plan.isOk());
  auto selector = AlgorithmSelector::create({{std::make_shared<const Plan>(std::move(plan).value())}},
                                            Topology::fullMesh(4), kDefaultScratchBytes);
  ASSERT_TRUE(selector.isOk());
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{4096}, std::size_t{1} << 30,
                            std::numeric_limits<std::size_t>::max()}) {
    EXPECT_EQ((*selector)->choose(bytes), Algorithm::kRecursiveDoubling) << bytes;
  }
  const auto estimates = (*selector)->estimate(1000, kSelectorElem);
  ASSERT_EQ(estimates.size(), 1u);
  EXPECT_EQ(estimates[0].algorithm, Algorithm::kRecursiveDoubling);
  EXPECT_GT(estimates[0].predicted_us, 0.0);
}

TEST(Selector, NoCandidatesIsAnInvalidArgument) {
  auto selector = AlgorithmSelector::create({}, Topology::fullMesh(2), kDefaultScratchBytes);
  ASSERT_FALSE(selector.isOk());
  EXPECT_EQ(selector.status().code(), ErrorCode::kInvalidArgument);
}

TEST(Selector, ScratchTooSmallForEveryCandidateIsOutOfMemory) {
  // Four ranks need at least 1 slot (recursive doubling) to 8 slots (ring) of 256 bytes; 200 bytes fit none.
  auto selector = AlgorithmSelector::create(allCandidates(4), Topology::fullMesh(4), 200);
  ASSERT_FALSE(selector.isOk());
  EXPECT_EQ(selector.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_NE(
      selector.status().message().find("no algorithm fits in 200 bytes of scratch (raise PEERREDUCE_SCRATCH_BYTES)"),
      std::string::npos)
      << selector.status().message();
}

// Candidates that need more scratch than there is are left out; the others are still chosen from.
TEST(Selector, CandidatesThatDoNotFitTheScratchAreLeftOut) {
  const auto candidates = allCandidates(4);
  const Plan& ring = *candidates[static_cast<std::size_t>(Algorithm::kRing) - 1].plan;
  ASSERT_EQ(ring.algorithm, Algorithm::kRing);
  const std::size_t scratch = static_cast<std::size_t>(ring.scratch_slots) * kScratchSlotAlignBytes - 1;
  auto selector = AlgorithmSelector::create(candidates, Topology::fullMesh(4), scratch);
  ASSERT_TRUE(selector.isOk()) << selector.status().toString();
  const auto estimates = (*selector)->estimate(100, kSelectorElem);
  EXPECT_TRUE(std::none_of(estimates.begin(), estimates.end(),
                           [](const AlgorithmEstimate& e) { return e.algorithm == Algorithm::kRing; }));
  EXPECT_FALSE(estimates.empty());
  for (std::size_t bytes : {std::size_t{8}, std::size_t{1} << 20})
    EXPECT_NE((*selector)->choose(bytes), Algorithm::kRing);
}

TEST(EstimateOperation, TooLittleScratchIsOutOfMemoryNamingTheAlgorithm) {
  const Plan plan = buildTwoShotPlan(4, false);  // 5 slots
  const Topology topology = Topology::fullMesh(4);
  PlanCostEvaluator evaluator(topology);
  auto estimate = estimateOperation(plan, 1000, kSelectorElem, evaluator, 5 * kScratchSlotAlignBytes - 1);
  ASSERT_FALSE(estimate.isOk());
  EXPECT_EQ(estimate.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_NE(estimate.status().message().find("two-shot needs 5 scratch slots of at least 256 bytes; 1279 bytes"),
            std::string::npos)
      << estimate.status().message();
}

// A count larger than one segment is split: whole segments at the segment's cost, plus the rest.
TEST(EstimateOperation, LargeCountsAreCostedSegmentBySegment) {
  const Plan plan = buildRingPlan(4, false);
  const Topology topology = Topology::fullMesh(4);
  PlanCostEvaluator evaluator(topology);
  const std::size_t scratch = std::size_t{1} << 20;
  const std::size_t segment = maxSegmentCount(plan, kSelectorElem, scratch);
  ASSERT_GT(segment, 0u);
  auto one = estimateOperation(plan, segment, kSelectorElem, evaluator, scratch);
  auto two = estimateOperation(plan, 2 * segment, kSelectorElem, evaluator, scratch);
  auto two_and_a_bit = estimateOperation(plan, 2 * segment + 1, kSelectorElem, evaluator, scratch);
  ASSERT_TRUE(one.isOk() && two.isOk() && two_and_a_bit.isOk());
  EXPECT_EQ(one->segments, 1);
  EXPECT_EQ(two->segments, 2);
  EXPECT_EQ(two_and_a_bit->segments, 3);
  EXPECT_DOUBLE_EQ(two->predicted_us, 2 * one->predicted_us);
  EXPECT_GT(two_and_a_bit->predicted_us, two->predicted_us);
  auto none = estimateOperation(plan, 0, kSelectorElem, evaluator, scratch);
  ASSERT_TRUE(none.isOk());
  EXPECT_EQ(none->segments, 0);
  EXPECT_GT(none->predicted_us, 0.0) << "even an empty operation synchronises";
}

// Every segment is its own plan execution, so it pays the launch overhead once: three segments cost
// three launches more than on a device without one.
TEST(EstimateOperation, EverySegmentPaysTheLaunchOverhead) {
  const Plan plan = buildRingPlan(4, false);
  DeviceModel launching;
  launching.launch_overhead_us = 4.5;
  const Topology plain = Topology::fullMesh(4);
  const Topology launched = Topology::fullMesh(4, Topology::defaultNvLink(), launching);
  PlanCostEvaluator plain_evaluator(plain);
  PlanCostEvaluator launched_evaluator(launched);
  const std::size_t scratch = std::size_t{1} << 20;
  const std::size_t count = 2 * maxSegmentCount(plan, kSelectorElem, scratch) + 1;
  auto without = estimateOperation(plan, count, kSelectorElem, plain_evaluator, scratch);
  auto with = estimateOperation(plan, count, kSelectorElem, launched_evaluator, scratch);
  ASSERT_TRUE(without.isOk() && with.isOk());
  ASSERT_EQ(with->segments, 3);
  EXPECT_NEAR(with->predicted_us, without->predicted_us + 3 * 4.5, 1e-6);
}

// Topologies that differ only in the launch overhead get their own selector tables: a large launch
// cost makes the segmented plans dearer, so the choice may differ and must not be shared.
TEST(AlgorithmSelector, LaunchOverheadIsPartOfTheTopologysIdentity) {
  DeviceModel launching;
  launching.launch_overhead_us = 1000.0;
  std::vector<SelectorCandidate> candidates;
  for (Algorithm a : {Algorithm::kOneShot, Algorithm::kRing}) {
    auto plan = buildPlan(PlanRequest{a, 4, false});
    ASSERT_TRUE(plan.isOk());
    candidates.push_back({std::make_shared<const Plan>(std::move(plan).value())});
  }
  auto plain = AlgorithmSelector::create(candidates, Topology::fullMesh(4), std::size_t{1} << 20);
  auto launched = AlgorithmSelector::create(candidates, Topology::fullMesh(4, Topology::defaultNvLink(), launching),
                                            std::size_t{1} << 20);
  ASSERT_TRUE(plain.isOk() && launched.isOk());
  EXPECT_NE(plain->get(), launched->get());
  const auto estimates = (*launched)->estimate(1 << 20, kSelectorElem);
  ASSERT_FALSE(estimates.empty());
  EXPECT_GT(estimates.front().predicted_us, 1000.0);
}

}  // namespace
}  // namespace peerreduce
