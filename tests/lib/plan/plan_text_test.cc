// The plan text format (plan/plan_text.h): every shipped plan of every collective prints and reads back
// to the same steps, which still verify; every malformed line is refused with kInvalidArgument naming its
// line (and inside a rank's section the rank and the step); every limit holds; messages about steps get
// their lines.
#include "plan/plan_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "text_contains.h"
#include "verify/verifier.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

// A two-rank allreduce by hand: each rank publishes its input, reads the peer's, folds in rank order.
constexpr const char* kHandWritten =
    "# a comment line\n"
    "peerreduce-plan 1\n"
    "name one-shot by hand   # comments end any line\n"
    "collective allreduce\n"
    "world 2\n"
    "chunks 1\n"
    "slots 1\n"
    "flags 2\n"
    "\n"
    "rank 0\n"
    "  copy c0 [in0] -> s0.0\n"
    "  signal r1 flag 1\n"
    "  wait r1 flag 1 >= 1\n"
    "  reduce c0 [s0.0 s1.0] -> out0 final\n"
    "  signal r1 flag 0\n"
    "rank 1\n"
    "  copy c0 [in1] -> s1.0\n"
    "  signal r0 flag 1\n"
    "  wait r0 flag 1 >= 1\n"
    "  reduce c0 [s0.0 s1.0] -> out1 final\n"
    "  signal r0 flag 0\n"
    "end\n";

TEST(PlanText, AHandWrittenPlanParsesAndVerifies) {
  auto parsed = parsePlanText(kHandWritten);
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  const Plan& plan = parsed->plan;
  EXPECT_EQ(plan.algorithm, Algorithm::kUser);
  EXPECT_EQ(plan.description, "one-shot by hand");
  EXPECT_EQ(plan.world_size, 2);
  EXPECT_EQ(plan.num_blocks, 1);
  EXPECT_EQ(plan.num_flags, 2);
  EXPECT_FALSE(plan.in_place);
  ASSERT_EQ(plan.programs.size(), 2u);
  EXPECT_EQ(plan.programs[0].steps.size(), 5u);
  EXPECT_EQ(plan.signal_counts, signalCounts(plan));
  EXPECT_EQ(parsed->step_lines[0], (std::vector<int>{11, 12, 13, 14, 15}));
  EXPECT_EQ(parsed->step_lines[1][3], 20);
  const VerifyReport report = verifyPlan(plan);
  EXPECT_TRUE(report.ok()) << (report.ok() ? "" : report.problems.front());
}

// Every shipped plan of every collective, printed, reads back to the same steps, prints the same text
// again, and (where it fits the format's flags) verifies as the original does.
TEST(PlanText, EveryShippedPlanRoundTrips) {
  struct Variant {
    Collective collective;
    Algorithm algorithm;
  };
  std::vector<Variant> variants;
  for (int a = 1; a < kBuiltAlgorithmCount; ++a)
    variants.push_back({Collective::kAllReduce, static_cast<Algorithm>(a)});
  for (Collective c : {Collective::kReduceScatter, Collective::kAllGather, Collective::kBroadcast}) {
    for (Algorithm a : {Algorithm::kOneShot, Algorithm::kTwoShot, Algorithm::kRing, Algorithm::kRecursiveDoubling,
                        Algorithm::kTree}) {
      if (c == Collective::kBroadcast && a == Algorithm::kRecursiveDoubling) continue;
      if (c != Collective::kBroadcast && a == Algorithm::kTwoShot) continue;  // broadcast's alone
      variants.push_back({c, a});
    }
  }
  for (const Variant& v : variants) {
    for (int n : {1, 2, 3, 4, 5, 8}) {
      for (bool in_place : {false, true}) {
        PlanRequest request{v.algorithm, n, in_place};
        request.collective = v.collective;
        request.root = v.collective == Collective::kBroadcast ? n - 1 : 0;
        auto built = buildPlan(request);
        ASSERT_TRUE(built.isOk()) << built.status().toString();
        const std::string text = formatPlanText(*built);
        auto parsed = parsePlanText(text);
        const std::string what = built->description + " n " + std::to_string(n);
        if (built->num_flags > kMaxPlanTextFlags) {
          ASSERT_FALSE(parsed.isOk()) << what;
          EXPECT_TRUE(contains(parsed.status().message(), "flags")) << parsed.status().toString();
          continue;
        }
        ASSERT_TRUE(parsed.isOk()) << what << ": " << parsed.status().toString();
        EXPECT_EQ(formatPlanText(parsed->plan), text) << what;
        const Plan& back = parsed->plan;
        EXPECT_EQ(back.collective, built->collective);
        EXPECT_EQ(back.root, built->root);
        EXPECT_EQ(back.num_chunks, built->num_chunks);
        EXPECT_EQ(back.scratch_slots, built->scratch_slots);
        EXPECT_EQ(back.in_place, built->in_place);
        EXPECT_EQ(back.signal_counts, built->signal_counts) << what;
        for (int r = 0; r < n; ++r) {
          const auto rank = static_cast<std::size_t>(r);
          EXPECT_EQ(describeRankProgram(back.programs[rank], r), describeRankProgram(built->programs[rank], r)) << what;
        }
        EXPECT_TRUE(verifyPlan(back).ok()) << what;
      }
    }
  }
}

// `text` with the first occurrence of `from` replaced by `to`.
std::string edited(const std::string& text, const std::string& from, const std::string& to) {
  std::string out = text;
  const auto at = out.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) out.replace(at, from.size(), to);
  return out;
}

TEST(PlanText, MalformedPlansAreRefusedNamingLineRankAndStep) {
  const std::string good = kHandWritten;
  const struct {
    std::string text;
    std::string message;  // the start of the message and what it must say
    std::string says;
  } cases[] = {
      {"", "plan text is empty", "peerreduce-plan 1"},
      {"# only a comment\n", "plan text is empty", "peerreduce-plan 1"},
      {edited(good, "peerreduce-plan 1", "peerreduce-plan 2"), "plan line 2:", "version '2' is not supported"},
      {edited(good, "peerreduce-plan 1", "plan 1"), "plan line 2:", "first line must be"},
      {edited(good, "world 2", "world 0"), "plan line 5:", "world size"},
      {edited(good, "world 2", "world 65"), "plan line 5:", "world size 65 is outside 1..64"},
      {edited(good, "world 2", "world two"), "plan line 5:", "not a whole number"},
      {edited(good, "world 2", "world 2 3"), "plan line 5:", "takes one value"},
      {edited(good, "chunks 1", "chunks 1025"), "plan line 6:", "chunks per block"},
      {edited(good, "slots 1", "slots 4097"), "plan line 7:", "scratch slots"},
      {edited(good, "flags 2", "flags 4"), "plan line 8:", "flags"},
      {edited(good, "flags 2", "colour blue"), "plan line 8:", "unknown line 'colour'"},
      {edited(good, "chunks 1\n", "chunks 1\nchunks 1\n"), "plan line 7:", "chunks is given twice"},
      {edited(good, "flags 2\n", ""), "plan line 9:", "the settings lack 'flags'"},
      {edited(good, "collective allreduce", "collective allgather"), "plan line 4:", "collective"},
      {edited(good, "world 2\n", "world 2\nroot 1\n"), "plan line 11:", "root is broadcast's"},
      {edited(good, "world 2\n", "world 2\nin-place maybe\n"), "plan line 6:", "in-place is yes or no"},
      {edited(good, "name one-shot by hand", "name tab\there"), "plan line 3:", "not printable"},
      {edited(good, "name one-shot by hand", "name " + std::string(201, 'x')), "plan line 3:", "name longer"},
      {edited(good, "rank 0\n", ""), "plan line 10:", "a step before the first 'rank R' line"},
      {edited(good, "rank 1\n", "rank 2\n"), "plan line 16:", "rank 2 where rank 1 was expected"},
      {edited(good, "rank 1\n", "rank\n"), "plan line 16:", "expected 'rank 1'"},
      {edited(good, "end\n", ""), "plan line 22:", "ends without 'end'"},
      {edited(good, "end\n", "end\nrank 2\n"), "plan line 23:", "text after 'end'"},
      {edited(good, "rank 1\n", "end\n"), "plan line 16:", "rank 1 has no section"},
      {edited(good, "end\n", "rank 2\nend\n"), "plan line 22:", "a section after the last rank"},
      {edited(good, "world 2\n", "world 2\nworld 3\n"), "plan line 6:", "world is given twice"},
      {edited(good, "  signal r1 flag 0\n", "  signal r1 flag 0\n  world 3\n"),
       "plan line 16, rank 0 step #5:", "world is a setting; settings go before the first rank"},
      {edited(good, "copy c0 [in0] -> s0.0", "move c0 [in0] -> s0.0"),
       "plan line 11, rank 0 step #0:", "unknown step 'move'"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c1 [in0] -> s0.0"), "plan line 11, rank 0 step #0:", "chunk"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy 0 [in0] -> s0.0"),
       "plan line 11, rank 0 step #0:", "expected chunk as cN"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 in0 -> s0.0 x y"),
       "plan line 11, rank 0 step #0:", "expected 'copy cN [SRC] -> DST', got 'in0'"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 [in0 in0] -> s0.0"),
       "plan line 11, rank 0 step #0:", "a copy has one source"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 [] -> s0.0 x"),
       "plan line 11, rank 0 step #0:", "a step needs a source"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 [in0 -> s0.0 x y"), "plan line 11, rank 0 step #0:", "got '->'"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 [in0 in0 in0 in0 in0"),
       "plan line 11, rank 0 step #0:", "no ']'"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 [in0] => s0.0"), "plan line 11, rank 0 step #0:", "got '=>'"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 [in0] -> s0.1"),
       "plan line 11, rank 0 step #0:", "scratch slot 1 is outside 0..0"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 [in0] -> s2.0"),
       "plan line 11, rank 0 step #0:", "rank of a scratch slot"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 [in0] -> t0.0"),
       "plan line 11, rank 0 step #0:", "expected a buffer (inR, outR or sR.SLOT), got 't0.0'"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 [in0] -> s0.0 final"),
       "plan line 11, rank 0 step #0:", "only a reduce can be final"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 [in0] -> s0.0 fast"),
       "plan line 11, rank 0 step #0:", "unexpected 'fast'"},
      {edited(good, "copy c0 [in0] -> s0.0", "copy c0 [in0] ->"), "plan line 11, rank 0 step #0:", "too short"},
      {edited(good, "copy c0 [in0] -> s0.0", "reduce c0 [in0 s0.0 ] ->"),
       "plan line 11, rank 0 step #0:", "no destination"},
      {edited(good, "  signal r1 flag 1\n", "  signal r0 flag 1\n"),
       "plan line 12, rank 0 step #1:", "cannot signal itself"},
      {edited(good, "  signal r1 flag 1\n", "  signal r1 flag 2\n"), "plan line 12, rank 0 step #1:", "flag"},
      {edited(good, "  signal r1 flag 1\n", "  signal r1 flg 1\n"),
       "plan line 12, rank 0 step #1:", "expected 'signal rP flag F', got 'flg'"},
      {edited(good, "  signal r1 flag 1\n", "  signal r5 flag 1\n"), "plan line 12, rank 0 step #1:", "peer"},
      {edited(good, "wait r1 flag 1 >= 1", "wait r1 flag 1 >= 0"), "plan line 13, rank 0 step #2:", "wait value"},
      {edited(good, "wait r1 flag 1 >= 1", "wait r1 flag 1 > 1"), "plan line 13, rank 0 step #2:", "got '>'"},
      {edited(good, "wait r1 flag 1 >= 1", "wait r1 flag 1"), "plan line 13, rank 0 step #2:", "expected 'wait"},
      {edited(good, "wait r1 flag 1 >= 1", "wait r1 flag 1 >= 99999999999"),
       "plan line 13, rank 0 step #2:", "is outside 1..1048576"},
      {edited(good, "slots 1", "slots 0"), "plan line 11, rank 0 step #0:", "the plan has 0 slots"},
      {"peerreduce-plan 1\n\x01\xff\n", "plan line 2:",
       "unknown line '?"
       "?'"},
  };
  for (const auto& c : cases) {
    auto parsed = parsePlanText(c.text);
    ASSERT_FALSE(parsed.isOk()) << c.message << " / " << c.says << ":\n" << c.text;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument);
    const std::string message = parsed.status().message();
    EXPECT_EQ(message.rfind(c.message, 0), 0u) << message;
    EXPECT_TRUE(contains(message, c.says)) << message;
  }
}

TEST(PlanText, EveryCutOffPrefixIsRefused) {
  const std::string good = kHandWritten;
  for (std::size_t size = 0; size + 4 < good.size(); ++size) {
    EXPECT_FALSE(parsePlanText(good.substr(0, size)).isOk()) << size;
  }
}

TEST(PlanText, CarriageReturnsAndTheSourceListWithoutSpacesAreAccepted) {
  std::string crlf;
  for (char c : std::string(kHandWritten)) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  auto parsed = parsePlanText(edited(crlf, "[s0.0 s1.0]", "[ s0.0\ts1.0 ]"));
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(formatPlanText(parsed->plan), formatPlanText(parsePlanText(kHandWritten)->plan));
}

TEST(PlanText, SizeLimitsHold) {
  EXPECT_FALSE(parsePlanText(std::string(kMaxPlanTextBytes + 1, '#')).isOk());
  // A reduce of more sources than the kernels take.
  std::string sources;
  for (int i = 0; i <= kMaxPlanTextSources; ++i) sources += " s0.0";
  auto parsed = parsePlanText(edited(kHandWritten, "[s0.0 s1.0] -> out0", "[" + sources + "] -> out0"));
  ASSERT_FALSE(parsed.isOk());
  EXPECT_TRUE(contains(parsed.status().message(), "more than 65 sources")) << parsed.status().toString();
  // Steps per rank.
  std::string many = "peerreduce-plan 1\ncollective allgather\n";
  many = "peerreduce-plan 1\ncollective all-gather\nworld 2\nchunks 1\nslots 0\nflags 1\nrank 0\n";
  for (std::size_t i = 0; i <= kMaxPlanTextStepsPerRank; ++i) many += "signal r1 flag 0\n";
  many += "rank 1\nend\n";
  parsed = parsePlanText(many);
  ASSERT_FALSE(parsed.isOk());
  EXPECT_TRUE(contains(parsed.status().message(), "more than 65536 steps in one rank")) << parsed.status().toString();
}

TEST(PlanText, BroadcastKeepsItsRootAndEmptyRanksAreAllowed) {
  const std::string text =
      "peerreduce-plan 1\ncollective broadcast\nworld 2\nroot 1\nchunks 1\nslots 1\nflags 2\n"
      "rank 0\n  wait r1 flag 1 >= 1\n  copy c0 [s1.0] -> out0\n  signal r1 flag 0\n"
      "rank 1\n  copy c0 [in1] -> s1.0\n  signal r0 flag 1\n  copy c0 [in1] -> out1\nend\n";
  auto parsed = parsePlanText(text);
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed->plan.root, 1);
  EXPECT_TRUE(verifyPlan(parsed->plan).ok());
  EXPECT_FALSE(parsePlanText(edited(text, "root 1", "root 2")).isOk()) << "root outside the world";
  auto lone = parsePlanText(
      "peerreduce-plan 1\ncollective allreduce\nworld 1\nchunks 1\nslots 0\nflags 1\n"
      "rank 0\n  reduce c0 [in0] -> out0 final\nend\n");
  ASSERT_TRUE(lone.isOk()) << lone.status().toString();
  EXPECT_TRUE(verifyPlan(lone->plan).ok());
}

TEST(PlanText, MessagesAboutStepsGetTheirLines) {
  auto parsed = parsePlanText(kHandWritten);
  ASSERT_TRUE(parsed.isOk());
  EXPECT_EQ(withPlanLines("race: rank 1 op 0 step #3 (reduce) reads while rank 0 op 1 step #0 (copy) writes", *parsed),
            "race: rank 1 op 0 step #3 [line 20] (reduce) reads while rank 0 op 1 step #0 [line 11] (copy) writes");
  EXPECT_EQ(withPlanLines("op 0 rank 0 step #4: signals rank 1 but there is no link", *parsed),
            "op 0 rank 0 step #4 [line 15]: signals rank 1 but there is no link");
  // Steps and ranks the plan lacks, and text with no rank before the step, are left alone.
  EXPECT_EQ(withPlanLines("rank 7 step #1, rank 0 step #99, step #2", *parsed),
            "rank 7 step #1, rank 0 step #99, step #2");
  EXPECT_EQ(withPlanLines("no steps here", *parsed), "no steps here");
}

TEST(PlanText, LoadingNamesTheFileAndRefusesWhatIsNotARegularFile) {
  auto missing = loadPlanText("/nonexistent/plan.txt", "(PEERREDUCE_PLAN_FILE)");
  ASSERT_FALSE(missing.isOk());
  EXPECT_TRUE(contains(missing.status().message(), "/nonexistent/plan.txt")) << missing.status().toString();
  EXPECT_TRUE(contains(missing.status().message(), "PEERREDUCE_PLAN_FILE")) << missing.status().toString();
  auto directory = loadPlanText("/tmp");
  ASSERT_FALSE(directory.isOk());
  EXPECT_TRUE(contains(directory.status().message(), "a directory")) << directory.status().toString();
  const std::string path = ::testing::TempDir() + "plan_text_test_bad.txt";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("peerreduce-plan 1\nworld x\n", f);
  std::fclose(f);
  auto bad = loadPlanText(path);
  ASSERT_FALSE(bad.isOk());
  EXPECT_TRUE(contains(bad.status().message(), "plan file '" + path + "'")) << bad.status().toString();
  EXPECT_TRUE(contains(bad.status().message(), "plan line 2")) << bad.status().toString();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace peerreduce
