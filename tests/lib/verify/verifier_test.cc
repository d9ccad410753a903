// The plan verifier (verify/verifier.h): every structural problem is reported by name and place,
// broken orderings and results are caught, and every plan the algorithms generate verifies, alone,
// twice in a row, and in random sequences with other algorithms' plans.
#include "verify/verifier.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {

// Every concrete algorithm (all but kAuto).
std::vector<Algorithm> concreteAlgorithms() {
  std::vector<Algorithm> out;
  for (int a = 1; a < kBuiltAlgorithmCount; ++a) out.push_back(static_cast<Algorithm>(a));
  return out;
}

std::string joined(const VerifyReport& report) {
  std::string out;
  for (const auto& p : report.problems) out += p + "\n";
  return out;
}

bool mentions(const VerifyReport& report, const std::string& text) {
  for (const auto& p : report.problems) {
    if (p.find(text) != std::string::npos) return true;
  }
  return false;
}

// Index of the first step of `kind` in rank's program.
std::size_t firstStep(const Plan& plan, int rank, StepKind kind) {
  const auto& steps = plan.programs[static_cast<std::size_t>(rank)].steps;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind == kind) return i;
  }
  ADD_FAILURE() << "rank " << rank << " has no step of kind " << static_cast<int>(kind);
  return 0;
}

Step& stepOf(Plan& plan, int rank, StepKind kind) {
  return plan.programs[static_cast<std::size_t>(rank)].steps[firstStep(plan, rank, kind)];
}

// The one-shot plan of two ranks: per rank copy in -> own scratch, signal, wait, reduce both scratches
// into the output, done signal. Small enough that each mutation below breaks exactly one thing.
Plan oneShot2() { return buildOneShotPlan(2, false); }

// A plan edited by `edit`, with signal counts refreshed so that only the edit itself is wrong.
Plan edited(const std::function<void(Plan&)>& edit) {
  Plan plan = oneShot2();
  edit(plan);
  plan.signal_counts = signalCounts(plan);
  return plan;
}

struct StructuralCase {
  const char* name;
  std::function<void(Plan&)> edit;
  const char* expected;  // text the report must contain
};

class VerifierStructure : public ::testing::TestWithParam<StructuralCase> {};

TEST_P(VerifierStructure, ReportsTheProblemWithItsPlace) {
  const StructuralCase& c = GetParam();
  ASSERT_TRUE(verifyPlan(oneShot2()).ok()) << "the unedited plan must verify";
  const Plan plan = edited(c.edit);
  const VerifyReport report = verifyPlan(plan);
  ASSERT_FALSE(report.ok()) << c.name << " was not caught";
  EXPECT_TRUE(mentions(report, c.expected)) << "expected '" << c.expected << "' in:\n" << joined(report);
}

INSTANTIATE_TEST_SUITE_P(
    EachProblem, VerifierStructure,
    ::testing::Values(
        StructuralCase{"WorldSizeZero", [](Plan& p) { p.world_size = 0; }, "world size 0 outside 1..64"},
        StructuralCase{"WorldSize65", [](Plan& p) { p.world_size = 65; }, "world size 65 outside 1..64"},
        StructuralCase{"ProgramCount", [](Plan& p) { p.programs.pop_back(); }, "op 0: 1 programs for 2 ranks"},
        StructuralCase{"NoFlags", [](Plan& p) { p.num_flags = 0; }, "op 0: num_flags 0 outside 1..8"},
        StructuralCase{"TooManyFlags", [](Plan& p) { p.num_flags = 9; }, "num_flags 9 outside 1..8"},
        StructuralCase{"NoChunks", [](Plan& p) { p.num_chunks = 0; }, "num_chunks must be at least 1"},
        StructuralCase{"ChunkOutOfRange", [](Plan& p) { stepOf(p, 1, StepKind::kCopy).chunk = 1; },
                       "op 0 rank 1 step #0: chunk 1 out of range"},
        StructuralCase{"NegativeChunk", [](Plan& p) { stepOf(p, 0, StepKind::kReduce).chunk = -1; },
                       "chunk -1 out of range"},
        StructuralCase{"CopyWithTwoSources", [](Plan& p) { stepOf(p, 0, StepKind::kCopy).src_count = 2; },
                       "bad source list (begin 0, count 2)"},
        StructuralCase{"ReduceWithNoSources", [](Plan& p) { stepOf(p, 0, StepKind::kReduce).src_count = 0; },
                       "bad source list"},
        StructuralCase{"SourcesPastTheList", [](Plan& p) { stepOf(p, 0, StepKind::kReduce).src_begin = 99; },
                       "bad source list (begin 99"},
        StructuralCase{"DestinationRankOutOfRange",
                       [](Plan& p) { stepOf(p, 0, StepKind::kCopy).dst = scratchOf(7, 0); },
                       "op 0 rank 0 step #0 destination: rank 7 out of range"},
        StructuralCase{"SourceRankNegative", [](Plan& p) { p.programs[1].sources[0] = scratchOf(-1, 0); },
                       "source: rank -1 out of range"},
        StructuralCase{"ScratchSlotOutOfRange", [](Plan& p) { stepOf(p, 0, StepKind::kCopy).dst = scratchOf(0, 5); },
                       "destination: scratch slot 5 outside 0..0"},
        StructuralCase{"WritesTheSendBuffer", [](Plan& p) { stepOf(p, 0, StepKind::kReduce).dst = inputOf(0); },
                       "writes the user's send buffer"},
        StructuralCase{"TouchesAPeersUserBuffer", [](Plan& p) { p.programs[0].sources[0] = inputOf(1); },
                       "touches the user buffer of rank 1"},
        StructuralCase{"UnknownBufferKind",
                       [](Plan& p) { stepOf(p, 0, StepKind::kCopy).dst.kind = static_cast<BufferKind>(5); },
                       "unknown buffer kind"},
        StructuralCase{"SignalToSelf", [](Plan& p) { stepOf(p, 0, StepKind::kSignal).peer = 0; },
                       "op 0 rank 0 step #1: peer 0 is not another rank"},
        StructuralCase{"SignalToRankOutOfRange", [](Plan& p) { stepOf(p, 1, StepKind::kSignal).peer = 2; },
                       "peer 2 is not another rank"},
        StructuralCase{"WaitOnNegativeRank", [](Plan& p) { stepOf(p, 0, StepKind::kWait).peer = -1; },
                       "peer -1 is not another rank"},
        StructuralCase{"WaitFlagOutOfRange", [](Plan& p) { stepOf(p, 0, StepKind::kWait).flag = 2; },
                       "flag 2 outside 0..1"},
        StructuralCase{"SignalFlagOutOfRange", [](Plan& p) { stepOf(p, 0, StepKind::kSignal).flag = -1; },
                       "flag -1 outside 0..1"},
        StructuralCase{"WaitForZero", [](Plan& p) { stepOf(p, 1, StepKind::kWait).value = 0; },
                       "wait for value 0 orders nothing"},
        StructuralCase{"UnknownStepKind",
                       [](Plan& p) { stepOf(p, 1, StepKind::kWait).kind = static_cast<StepKind>(6); },
                       "unknown step kind"}),
    [](const ::testing::TestParamInfo<StructuralCase>& param_info) { return std::string(param_info.param.name); });

// Editing programs without refreshing signal_counts is caught (the executors trust the counts).
TEST(Verifier, StaleSignalCountsAreReported) {
  Plan plan = oneShot2();
  auto& steps = plan.programs[0].steps;
  steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(firstStep(plan, 0, StepKind::kSignal)));
  const VerifyReport report = verifyPlan(plan);
  EXPECT_TRUE(mentions(report, "signal_counts is stale; recompute it with signalCounts()")) << joined(report);
}

// Bug: the stale-count check ran signalCounts() over steps not yet range-checked, so a signal to a
// rank outside the world wrote outside the counts table instead of being reported.
TEST(Verifier, SignalToAnOutOfRangeRankIsReportedNotWrittenOutOfBounds) {
  Plan plan = oneShot2();
  stepOf(plan, 0, StepKind::kSignal).peer = 40;
  stepOf(plan, 1, StepKind::kSignal).flag = 7;
  const VerifyReport report = verifyPlan(plan);
  EXPECT_TRUE(mentions(report, "peer 40 is not another rank")) << joined(report);
  EXPECT_TRUE(mentions(report, "flag 7 outside 0..1")) << joined(report);
}

TEST(Verifier, MissingLinksAreReportedForReadsAndSignals) {
  VerifyOptions options;
  options.link = {{true, false}, {true, true}};  // rank 0 cannot reach rank 1
  const VerifyReport report = verifyPlan(oneShot2(), options);
  EXPECT_TRUE(mentions(report, "touches rank 1's memory but there is no link 0->1")) << joined(report);
  EXPECT_TRUE(mentions(report, "signals rank 1 but there is no link")) << joined(report);
  EXPECT_FALSE(mentions(report, "no link 1->0")) << joined(report);
}

// links_used lists exactly the pairs the plan reaches across, the same whether or not a link matrix was given
// (a cache relies on it to carry one verdict over to every matrix that holds those pairs).
TEST(Verifier, LinksUsedAreThePairsAPlanReachesAcross) {
  const VerifyReport mesh = verifyPlan(oneShot2());
  ASSERT_TRUE(mesh.ok()) << joined(mesh);
  const std::vector<std::vector<bool>> both_ways = {{false, true}, {true, false}};
  EXPECT_EQ(mesh.links_used, both_ways)
      << "one-shot reads and signals the peer both ways; a rank's own memory is no link";
  VerifyOptions options;
  options.link = {{true, true}, {true, true}};
  EXPECT_EQ(verifyPlan(oneShot2(), options).links_used, both_ways);

  // A plan of 3 ranks whose only cross-rank step is rank 0 signalling rank 1 (and rank 1 waiting for it):
  // one pair used, one direction.
  Plan plan = buildOneShotPlan(3, false);
  for (RankProgram& program : plan.programs) {
    program.steps.clear();
    program.sources.clear();
  }
  Step signal;
  signal.kind = StepKind::kSignal;
  signal.peer = 1;
  signal.flag = 0;
  plan.programs[0].steps.push_back(signal);
  Step wait = signal;
  wait.kind = StepKind::kWait;
  wait.peer = 0;
  wait.value = 1;
  plan.programs[1].steps.push_back(wait);
  plan.signal_counts = signalCounts(plan);
  const VerifyReport report = verifyPlan(plan);  // fails on results (no data moves); the structure is sound
  ASSERT_EQ(report.links_used.size(), 3u);
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      EXPECT_EQ(report.links_used[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)], a == 0 && b == 1)
          << a << "->" << b;
    }
  }
}

TEST(Verifier, LinkMatrixOfTheWrongShapeIsReported) {
  VerifyOptions options;
  options.link = {{true, true, true}, {true, true, true}};
  EXPECT_TRUE(mentions(verifyPlan(oneShot2(), options), "link matrix is not 2 x 2"));
  options.link = {{true, true}, {true}};
  EXPECT_TRUE(mentions(verifyPlan(oneShot2(), options), "link matrix is not 2 x 2"));
}

TEST(Verifier, PlansOfDifferentWorldSizesCannotBeSequenced) {
  const Plan two = oneShot2();
  const Plan three = buildOneShotPlan(3, false);
  const Plan* plans[] = {&two, &three};
  EXPECT_TRUE(mentions(verifySequence(plans), "op 1: world size 3 differs from 2"));
}

TEST(Verifier, EmptySequenceIsTriviallyCorrect) { EXPECT_TRUE(verifySequence({}).ok()); }

// ---- liveness and ordering -----------------------------------------------------------------------

TEST(Verifier, WaitThatNoSignalSatisfiesIsADeadlock) {
  Plan plan = oneShot2();
  stepOf(plan, 1, StepKind::kWait).value = 2;  // rank 0 sends flag 1 only once
  const Plan* plans[] = {&plan};
  const VerifyReport report = verifySequence(plans);
  EXPECT_TRUE(mentions(report,
                       "deadlock: rank 1 op 0 step #2 (wait r0 flag 1 >= 2) waits for signal 2 of flag 1 "
                       "from rank 0, which sends only 1 before it stops"))
      << joined(report);
}

TEST(Verifier, ReadWithoutWaitingIsARace) {
  Plan plan = oneShot2();
  auto& steps = plan.programs[1].steps;
  steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(firstStep(plan, 1, StepKind::kWait)));
  const VerifyReport report = verifyPlan(plan);
  EXPECT_TRUE(mentions(report, "race on rank 0's scratch slot 0")) << joined(report);
  EXPECT_TRUE(mentions(report, "with no signal ordering them")) << joined(report);
}

// Without its done signal to rank 0, rank 1's read of rank 0's scratch in one operation is not ordered
// before rank 0 overwriting that scratch in the next: the hazard between consecutive operations that
// the entry fence exists to prevent.
TEST(Verifier, MissingDoneSignalIsARaceWithTheNextOperation) {
  Plan plan = oneShot2();
  auto& steps = plan.programs[1].steps;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind == StepKind::kSignal && steps[i].flag == kDoneFlag) {
      steps.erase(steps.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  plan.signal_counts = signalCounts(plan);
  const Plan* once[] = {&plan};
  EXPECT_TRUE(verifySequence(once).ok()) << "one operation alone is still fine: " << joined(verifySequence(once));
  const VerifyReport report = verifyPlan(plan);
  EXPECT_TRUE(mentions(report,
                       "race on rank 0's scratch: rank 1 op 0 step #3 (reduce c0 [s0.0 s1.0] -> out1 final) reads "
                       "while rank 0 op 1 step #0 (copy c0 [in0] -> s0.0) writes, with no signal ordering them"))
      << joined(report);
}

// ---- values and results --------------------------------------------------------------------------

// Single-rank plans written by hand: no signals needed, each shows one kind of wrong result.
Plan singleRank(const std::function<void(PlanBuilder&)>& body, int chunks = 1, bool in_place = false) {
  PlanBuilder b(Algorithm::kOneShot, 1, chunks, kFirstAlgorithmFlag, in_place);
  body(b);
  return b.finish("hand-made");
}

VerifyReport verifyOnce(const Plan& plan) {
  const Plan* plans[] = {&plan};
  return verifySequence(plans);
}

TEST(VerifierResults, HandWrittenCorrectPlanVerifies) {
  const Plan plan = singleRank([](PlanBuilder& b) {
    b.copy(0, 0, inputOf(0), scratchOf(0, 0));
    const BufferRef source = scratchOf(0, 0);
    b.reduce(0, 0, std::span<const BufferRef>(&source, 1), outputOf(0), true);
  });
  EXPECT_TRUE(verifyPlan(plan).ok()) << joined(verifyPlan(plan));
}

TEST(VerifierResults, OutputNeverWritten) {
  const Plan plan = singleRank([](PlanBuilder&) {});
  EXPECT_TRUE(mentions(verifyOnce(plan), "op 0 rank 0 chunk 0: output never written"));
}

TEST(VerifierResults, ReadOfMemoryNoStepWrote) {
  const Plan plan = singleRank([](PlanBuilder& b) { b.copy(0, 0, scratchOf(0, 0), outputOf(0)); });
  EXPECT_TRUE(mentions(verifyOnce(plan), "reads memory that holds no value of this operation"))
      << joined(verifyOnce(plan));
}

TEST(VerifierResults, ChunkReadAsAnotherChunk) {
  const Plan plan = singleRank(
      [](PlanBuilder& b) {
        const BufferRef in = inputOf(0);
        b.reduce(0, 0, std::span<const BufferRef>(&in, 1), scratchOf(0, 0), true);
        b.copy(0, 0, scratchOf(0, 0), outputOf(0));
        b.copy(0, 1, scratchOf(0, 0), outputOf(0));
      },
      2);
  EXPECT_TRUE(mentions(verifyOnce(plan), "reads chunk 0's value as chunk 1")) << joined(verifyOnce(plan));
}

// The second operation reads scratch the first one filled and never writes it itself.
TEST(VerifierResults, ValueLeftByAnEarlierOperation) {
  const Plan first = singleRank([](PlanBuilder& b) {
    const BufferRef in = inputOf(0);
    b.reduce(0, 0, std::span<const BufferRef>(&in, 1), scratchOf(0, 0), true);
    b.copy(0, 0, scratchOf(0, 0), outputOf(0));
  });
  const Plan second = singleRank([](PlanBuilder& b) { b.copy(0, 0, scratchOf(0, 0), outputOf(0)); });
  const Plan* plans[] = {&first, &second};
  const VerifyReport report = verifySequence(plans);
  EXPECT_TRUE(mentions(report, "rank 0 op 1 step #0 (copy c0 [s0.0] -> out0) reads a value left by op 0"))
      << joined(report);
}

TEST(VerifierResults, InputCountedTwice) {
  const Plan plan = singleRank([](PlanBuilder& b) {
    const BufferRef twice[2] = {inputOf(0), inputOf(0)};
    b.reduce(0, 0, twice, outputOf(0), true);
  });
  EXPECT_TRUE(mentions(verifyOnce(plan), "output counts the input of rank 0 more than once"));
}

TEST(VerifierResults, FinalizationMissingOrRepeated) {
  const Plan never = singleRank([](PlanBuilder& b) {
    const BufferRef in = inputOf(0);
    b.reduce(0, 0, std::span<const BufferRef>(&in, 1), outputOf(0), false);
  });
  EXPECT_TRUE(mentions(verifyOnce(never), "applied 0 times or not at the root")) << joined(verifyOnce(never));
  const Plan twice = singleRank([](PlanBuilder& b) {
    const BufferRef in = inputOf(0);
    b.reduce(0, 0, std::span<const BufferRef>(&in, 1), scratchOf(0, 0), true);
    const BufferRef partial = scratchOf(0, 0);
    b.reduce(0, 0, std::span<const BufferRef>(&partial, 1), outputOf(0), true);
  });
  EXPECT_TRUE(mentions(verifyOnce(twice), "applied 2 times")) << joined(verifyOnce(twice));
}

// In place, the output is the send buffer: a read of the send buffer after the output was written there
// would be premultiplied again under a floating avg, so the verifier refuses it; out of place the same
// steps read the untouched input and are fine.
TEST(VerifierResults, SendBufferReadAfterAnInPlaceWriteIsReported) {
  const auto body = [](PlanBuilder& b) {
    const BufferRef in = inputOf(0);
    b.reduce(0, 0, std::span<const BufferRef>(&in, 1), outputOf(0), true);
    b.copy(0, 0, inputOf(0), scratchOf(0, 0));
  };
  const Plan out_of_place = singleRank(body);
  EXPECT_TRUE(verifyOnce(out_of_place).ok()) << joined(verifyOnce(out_of_place));
  const Plan in_place = singleRank(body, 1, true);
  EXPECT_TRUE(mentions(verifyOnce(in_place),
                       "rank 0 op 0 step #1 (copy c0 [in0] -> s0.0) reads its send buffer after the operation "
                       "overwrote it in place"))
      << joined(verifyOnce(in_place));
}

TEST(VerifierResults, OutputMissingOtherRanksInputs) {
  PlanBuilder b(Algorithm::kOneShot, 2, 1, kFirstAlgorithmFlag, false);
  for (int r = 0; r < 2; ++r) {
    const BufferRef in = inputOf(r);
    b.reduce(r, 0, std::span<const BufferRef>(&in, 1), outputOf(r), true);
  }
  const Plan plan = b.finish("each rank keeps its own input");
  EXPECT_TRUE(mentions(verifyOnce(plan), "op 0 rank 1 chunk 0: output misses the input of rank 0"))
      << joined(verifyOnce(plan));
}

// Both ranks sum the same two inputs but in opposite orders: floating point may differ in the last bit.
TEST(VerifierResults, DifferentReductionOrderOnDifferentRanks) {
  Plan plan = oneShot2();
  auto& sources = plan.programs[1].sources;
  const std::size_t reduce = firstStep(plan, 1, StepKind::kReduce);
  const Step& step = plan.programs[1].steps[reduce];
  std::swap(sources[step.src_begin], sources[step.src_begin + 1]);
  EXPECT_TRUE(mentions(verifyOnce(plan), "op 0 rank 1 chunk 0: reduction order differs from rank 0's"))
      << joined(verifyOnce(plan));
}

TEST(VerifierReport, StopsAtMaxProblemsAndBecomesAnInternalError) {
  Plan plan = oneShot2();
  for (auto& program : plan.programs) {
    for (auto& step : program.steps) step.chunk = 3;  // every data step out of range
  }
  VerifyOptions options;
  options.max_problems = 2;
  const VerifyReport report = verifyPlan(plan, options);
  EXPECT_EQ(report.problems.size(), 2u) << joined(report);
  const Status status = report.toStatus("one-shot plan");
  EXPECT_EQ(status.code(), ErrorCode::kInternal);
  EXPECT_EQ(status.message(),
            "one-shot plan failed verification:\n  " + report.problems[0] + "\n  " + report.problems[1]);
  EXPECT_TRUE(VerifyReport{}.toStatus("anything").isOk());
}

// ---- every generated plan ------------------------------------------------------------------------

// Every algorithm at every world size 1..64, in and out of place, verifies. Verifying two operations
// in a row (the hazards between operations) costs about twice as much and grows with the cube of the
// world size, so it runs on the sizes where plans change shape (up to 17, around the powers of two
// where folding changes) and leaves the rest to the random sequences below and to creation.
class EveryGeneratedPlan : public ::testing::TestWithParam<std::tuple<Algorithm, bool>> {};

bool verifyTwiceAt(int n) { return n <= 17 || n == 31 || n == 32 || n == 33; }

TEST_P(EveryGeneratedPlan, VerifiesAtEveryWorldSize) {
  const auto [algorithm, in_place] = GetParam();
  for (int n = 1; n <= kMaxWorldSize; ++n) {
    auto plan = buildPlan(PlanRequest{algorithm, n, in_place});
    ASSERT_TRUE(plan.isOk()) << plan.status().toString();
    EXPECT_EQ(plan->algorithm, algorithm);
    EXPECT_EQ(plan->world_size, n);
    EXPECT_EQ(plan->in_place, in_place);
    const Plan* once[] = {&*plan};
    const VerifyReport report = verifyTwiceAt(n) ? verifyPlan(*plan) : verifySequence(once);
    ASSERT_TRUE(report.ok()) << algorithmName(algorithm) << " n=" << n << " in_place=" << in_place << ":\n"
                             << joined(report);
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, EveryGeneratedPlan,
                         ::testing::Combine(::testing::ValuesIn(concreteAlgorithms()), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<Algorithm, bool>>& param_info) {
                           std::string name(algorithmName(std::get<0>(param_info.param)));
                           for (char& ch : name) ch = ch == '-' ? '_' : ch;
                           return name + (std::get<1>(param_info.param) ? "_in_place" : "_out_of_place");
                         });

// The ring only reads from its predecessor and signals its successor, so it verifies on a bare
// (bidirectional) ring of links, where the all-to-all algorithms are reported as needing missing links.
TEST(Verifier, RingPlanNeedsOnlyRingLinks) {
  constexpr int kSize = 6;
  VerifyOptions options;
  options.link.assign(kSize, std::vector<bool>(kSize, false));
  for (int a = 0; a < kSize; ++a) {
    options.link[a][(a + 1) % kSize] = true;
    options.link[(a + 1) % kSize][a] = true;
  }
  EXPECT_TRUE(verifyPlan(buildRingPlan(kSize, false), options).ok());
  EXPECT_TRUE(mentions(verifyPlan(buildOneShotPlan(kSize, false), options), "no link"));
  EXPECT_TRUE(verifyPlan(buildRingPlanOver({0, 2, 4, 1, 5, 3}, true)).ok());
}

TEST(BuildPlan, RejectsAutoUnknownAlgorithmsAndWorldSizesOutOfRange) {
  auto automatic = buildPlan(PlanRequest{Algorithm::kAuto, 4, false});
  ASSERT_FALSE(automatic.isOk());
  EXPECT_NE(automatic.status().message().find("'auto' is resolved by the selector"), std::string::npos);
  auto unknown = buildPlan(PlanRequest{static_cast<Algorithm>(17), 4, false});
  ASSERT_FALSE(unknown.isOk());
  EXPECT_NE(unknown.status().message().find("unknown algorithm value 17"), std::string::npos);
  EXPECT_EQ(buildPlan(PlanRequest{static_cast<Algorithm>(17), 1, false}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(buildPlan(PlanRequest{Algorithm::kAuto, 1, false}).status().code(), ErrorCode::kInvalidArgument);
  for (int n : {0, -1, 65}) {
    auto plan = buildPlan(PlanRequest{Algorithm::kRing, n, false});
    ASSERT_FALSE(plan.isOk()) << n;
    EXPECT_NE(plan.status().message().find("world size " + std::to_string(n) + "; supported sizes are 1..64"),
              std::string::npos);
  }
}

TEST(PowerOfTwoFold, FoldsTheFirstExtraPairsAndMapsVirtualRanksBack) {
  const PowerOfTwoFold fold(6);  // active 4, extra 2: ranks 1 and 3 fold into 0 and 2
  EXPECT_EQ(fold.active, 4);
  EXPECT_EQ(fold.extra, 2);
  const int virtual_of[] = {0, -1, 1, -1, 2, 3};
  for (int r = 0; r < 6; ++r) {
    EXPECT_EQ(fold.virtualRank(r), virtual_of[r]) << r;
    EXPECT_EQ(fold.isFolded(r), virtual_of[r] < 0) << r;
    if (virtual_of[r] >= 0) {
      EXPECT_EQ(fold.rankOfVirtual(virtual_of[r]), r);
    }
  }
  EXPECT_EQ(fold.foldPartner(0), 1);
  EXPECT_EQ(fold.foldPartner(1), 0);
  EXPECT_EQ(fold.foldPartner(3), 2);
  EXPECT_EQ(fold.foldPartner(4), -1);
  const PowerOfTwoFold exact(8);
  EXPECT_EQ(exact.extra, 0);
  EXPECT_EQ(exact.foldPartner(0), -1);
}

// Random sequences of plans of random algorithms (same world size, random placement) verify: the
// entry fence and done signals keep any algorithm safe after any other.
RC_GTEST_PROP(VerifierProperty, RandomSequencesOfGeneratedPlansVerify, ()) {
  const int n = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(1, 13));
  const int length = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(2, 5));
  std::vector<Plan> plans;
  for (int i = 0; i < length; ++i) {
    const Algorithm algorithm = *rc::gen::resize(rc::kNominalSize, rc::gen::elementOf(concreteAlgorithms()));
    const bool in_place = *rc::gen::arbitrary<bool>();
    auto plan = buildPlan(PlanRequest{algorithm, n, in_place});
    RC_ASSERT(plan.isOk());
    plans.push_back(std::move(plan).value());
  }
  std::vector<const Plan*> pointers;
  for (const Plan& plan : plans) pointers.push_back(&plan);
  const VerifyReport report = verifySequence(pointers);
  RC_ASSERT(joined(report) == "");
}

}  // namespace
}  // namespace peerreduce
