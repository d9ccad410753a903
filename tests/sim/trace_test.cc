// Trace export and schedule fingerprints: the Chrome trace is real JSON with one row per rank, a
// slice per step and an arrow per satisfied signal; the fingerprint identifies the interleaving.
#include "trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "allreduce_case.h"
#include "json_lite.h"
#include "sim_test_util.h"

namespace peerreduce::testing {
namespace {

struct TracedRun {
  std::unique_ptr<TestWorld> world;
  CaseOutcome outcome;
  sim::SimWorld& sim() const { return *world->simWorld(); }
};

TracedRun runTraced(int n, Algorithm algorithm, std::uint64_t seed, bool record, std::size_t count = 1000) {
  sim::SimOptions options;
  options.seed = seed;
  options.record_trace = record;
  Config config;
  config.algorithm = algorithm;
  config.scratch_bytes = kMinScratchBytes;
  TracedRun run;
  auto world = makeSimTestWorld(n, options, config);
  EXPECT_TRUE(world.isOk()) << world.status().toString();
  if (!world.isOk()) return run;
  run.world = std::move(world).value();
  AllreduceCase c;
  c.world_size = n;
  c.count = count;
  c.algorithm = algorithm;
  c.seed = seed;
  run.outcome = runAllreduceCase(*run.world, c);
  EXPECT_TRUE(run.outcome.ok) << run.outcome.problem;
  return run;
}

json::Value parseJson(const std::string& text) {
  json::Parser parser(text);
  auto value = parser.parse();
  EXPECT_TRUE(value.has_value()) << parser.error() << "\n" << text.substr(0, 2000);
  return value.value_or(json::Value{});
}

std::vector<const json::Value*> eventsWithPhase(const json::Value& root, const std::string& phase) {
  std::vector<const json::Value*> out;
  if (!root.has("traceEvents")) return out;
  for (const auto& e : root.at("traceEvents").items) {
    if (e.has("ph") && e.at("ph").text == phase) out.push_back(&e);
  }
  return out;
}

TEST(ChromeTrace, IsValidJsonWithOneRowPerRankStepSlicesAndSignalArrows) {
  constexpr int kRanks = 4;
  const TracedRun run = runTraced(kRanks, Algorithm::kRing, 3, true);
  ASSERT_TRUE(run.world);
  const json::Value root = parseJson(run.sim().chromeTraceJson());
  ASSERT_TRUE(root.has("traceEvents"));
  ASSERT_EQ(root.at("traceEvents").kind, json::Value::Kind::kArray);

  std::map<int, std::string> row_names;
  for (const auto* e : eventsWithPhase(root, "M")) {
    if (e->at("name").text != "thread_name") continue;
    const int tid = static_cast<int>(e->at("tid").number);
    EXPECT_EQ(row_names.count(tid), 0u) << "two names for row " << tid;
    row_names[tid] = e->at("args").at("name").text;
  }
  ASSERT_EQ(row_names.size(), static_cast<std::size_t>(kRanks));
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(row_names[r], "rank " + std::to_string(r));

  const auto slices = eventsWithPhase(root, "X");
  const sim::SimStats stats = run.sim().stats();
  // One slice per executed step plus one per entry fence (one fence per plan execution).
  EXPECT_EQ(slices.size(), stats.steps + stats.operations);
  std::set<int> rows_with_slices;
  for (const auto* e : slices) {
    ASSERT_TRUE(e->has("ts") && e->has("dur") && e->has("tid") && e->has("args")) << "slice without its fields";
    EXPECT_GE(e->at("ts").number, 0.0);
    EXPECT_GE(e->at("dur").number, 0.0);
    EXPECT_LE(e->at("ts").number + e->at("dur").number, stats.virtual_time_us + 1e-3);
    const std::string& name = e->at("name").text;
    const bool known = name == "entry fence" || name.rfind("copy c", 0) == 0 || name.rfind("reduce c", 0) == 0 ||
                       name.rfind("signal r", 0) == 0 || name.rfind("wait r", 0) == 0;
    EXPECT_TRUE(known) << name;
    EXPECT_EQ(e->at("args").at("step").number < 0, name == "entry fence") << name;
    rows_with_slices.insert(static_cast<int>(e->at("tid").number));
  }
  EXPECT_EQ(rows_with_slices.size(), static_cast<std::size_t>(kRanks));

  // Arrows: every wait's end ("f") pairs with the signal ("s") it consumed, on another row, earlier.
  std::map<double, const json::Value*> starts;
  for (const auto* e : eventsWithPhase(root, "s")) starts[e->at("id").number] = e;
  const auto finishes = eventsWithPhase(root, "f");
  ASSERT_FALSE(finishes.empty());
  EXPECT_GE(starts.size(), finishes.size());
  for (const auto* f : finishes) {
    auto it = starts.find(f->at("id").number);
    ASSERT_NE(it, starts.end()) << "a wait arrow without its signal, id " << f->at("id").number;
    EXPECT_NE(it->second->at("tid").number, f->at("tid").number);
    EXPECT_LE(it->second->at("ts").number, f->at("ts").number);
    EXPECT_EQ(f->at("bp").text, "e");
  }
}

TEST(ChromeTrace, WithoutRecordingHoldsOnlyTheRowNames) {
  const TracedRun run = runTraced(3, Algorithm::kOneShot, 1, false);
  ASSERT_TRUE(run.world);
  const json::Value root = parseJson(run.sim().chromeTraceJson());
  EXPECT_TRUE(eventsWithPhase(root, "X").empty());
  EXPECT_EQ(eventsWithPhase(root, "M").size(), 4u);  // three rows and the process name
}

TEST(ChromeTrace, WriteChromeTraceWritesExactlyTheJson) {
  const TracedRun run = runTraced(2, Algorithm::kTwoShot, 1, true);
  ASSERT_TRUE(run.world);
  const auto path =
      std::filesystem::temp_directory_path() /
      ("peerreduce_trace_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".json");
  ASSERT_TRUE(run.sim().writeChromeTrace(path.string()).isOk());
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_EQ(contents.str(), run.sim().chromeTraceJson());
  std::filesystem::remove(path);
}

TEST(ChromeTrace, WriteToAnUnopenablePathIsUnavailableNamingIt) {
  const TracedRun run = runTraced(2, Algorithm::kOneShot, 1, true, 10);
  ASSERT_TRUE(run.world);
  const Status s = run.sim().writeChromeTrace("/nonexistent-peerreduce-dir/trace.json");
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.toString();
  EXPECT_TRUE(contains(s.message(), "cannot open '/nonexistent-peerreduce-dir/trace.json'")) << s.toString();
}

TEST(ChromeTrace, WriteThatFailsOnTheDiskIsUnavailable) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  const TracedRun run = runTraced(2, Algorithm::kOneShot, 1, true, 10);
  ASSERT_TRUE(run.world);
  const Status s = run.sim().writeChromeTrace("/dev/full");
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.toString();
  EXPECT_TRUE(contains(s.message(), "writing the trace to '/dev/full' failed")) << s.toString();
}

TEST(TraceFingerprint, EqualSeedsGiveEqualFingerprints) {
  for (Algorithm algorithm : {Algorithm::kRing, Algorithm::kRabenseifner}) {
    const TracedRun a = runTraced(5, algorithm, 17, false);
    const TracedRun b = runTraced(5, algorithm, 17, false);
    ASSERT_TRUE(a.world && b.world);
    EXPECT_EQ(a.sim().traceFingerprint(), b.sim().traceFingerprint()) << algorithmName(algorithm);
    EXPECT_EQ(a.outcome.result_hash, b.outcome.result_hash);
  }
}

TEST(TraceFingerprint, SomeOtherSeedGivesAnotherInterleaving) {
  // Ranks of a ring run concurrently, so the scheduler's choices show in the fingerprint; the result
  // bits must not depend on them.
  const TracedRun base = runTraced(4, Algorithm::kRing, 1, false, 64);
  ASSERT_TRUE(base.world);
  std::set<std::uint64_t> fingerprints = {base.sim().traceFingerprint()};
  for (std::uint64_t seed = 2; seed <= 12; ++seed) {
    const TracedRun other = runTraced(4, Algorithm::kRing, seed, false, 64);
    ASSERT_TRUE(other.world);
    fingerprints.insert(other.sim().traceFingerprint());
  }
  EXPECT_GT(fingerprints.size(), 1u);
}

TEST(TraceFingerprint, RecordingTheTraceDoesNotChangeTheFingerprint) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const TracedRun plain = runTraced(4, Algorithm::kTwoShot, seed, false);
    const TracedRun recorded = runTraced(4, Algorithm::kTwoShot, seed, true);
    ASSERT_TRUE(plain.world && recorded.world);
    EXPECT_EQ(plain.sim().traceFingerprint(), recorded.sim().traceFingerprint()) << seed;
  }
}

// TraceRecorder on its own: escaping, the no-events mode, clear().

TEST(TraceRecorder, EventNamesAreEscapedIntoValidJson) {
  sim::TraceRecorder recorder(true);
  const std::string tricky = "q\"uote \\ back\nline\ttab\x01";
  recorder.record(sim::TraceEvent{1, 7, 3, tricky, 1.5, 2.0, 64, -1, 0, false});
  const json::Value root = parseJson(recorder.chromeJson(2));
  const auto slices = eventsWithPhase(root, "X");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]->at("name").text, tricky);
  EXPECT_EQ(slices[0]->at("args").at("bytes").number, 64.0);
  EXPECT_EQ(slices[0]->at("args").at("op").number, 7.0);
}

TEST(TraceRecorder, WithoutKeepingEventsOnlyTheFingerprintAdvancesLikeFingerprintOnly) {
  sim::TraceRecorder kept(true), dropped(false), cheap(false);
  const std::uint64_t empty = kept.fingerprint();
  const sim::TraceEvent event{2, 5, 4, "copy c0", 3.25, 4.0, 8, -1, 0, false};
  kept.record(event);
  dropped.record(event);
  cheap.fingerprintOnly(2, 5, 4, 3.25);
  EXPECT_NE(kept.fingerprint(), empty);
  EXPECT_EQ(kept.fingerprint(), dropped.fingerprint());
  EXPECT_EQ(kept.fingerprint(), cheap.fingerprint());
  EXPECT_EQ(kept.events().size(), 1u);
  EXPECT_TRUE(dropped.events().empty());
  EXPECT_FALSE(dropped.keepsEvents());
  // Order matters: the same actions in another order are another schedule.
  sim::TraceRecorder swapped(false);
  swapped.fingerprintOnly(2, 5, 4, 3.25);
  swapped.fingerprintOnly(1, 5, 4, 3.25);
  cheap.fingerprintOnly(1, 5, 4, 3.25);
  sim::TraceRecorder reversed(false);
  reversed.fingerprintOnly(1, 5, 4, 3.25);
  reversed.fingerprintOnly(2, 5, 4, 3.25);
  EXPECT_EQ(swapped.fingerprint(), cheap.fingerprint());
  EXPECT_NE(reversed.fingerprint(), cheap.fingerprint());
  kept.clear();
  EXPECT_EQ(kept.fingerprint(), empty);
  EXPECT_TRUE(kept.events().empty());
}

// A trace past its limit keeps the first 1,000,000 events and says how many it left out, in its
// metadata and through SimStats (peerreduce-sim prints it), instead of being cut without a word.
TEST(TraceRecorder, EventsPastTheLimitAreCountedAndNamedInTheMetadata) {
  constexpr std::size_t kLimit = 1'000'000;
  sim::TraceRecorder recorder(true);
  const sim::TraceEvent event{0, 1, 2, "copy", 1.0, 2.0, 8, -1, 0, false};
  for (std::size_t i = 0; i < kLimit + 25; ++i) recorder.record(event);
  EXPECT_EQ(recorder.events().size(), kLimit);
  EXPECT_EQ(recorder.droppedEvents(), 25u);
  const std::string json = recorder.chromeJson(1);
  const json::Value root = parseJson(json.substr(0, json.find("\"traceEvents\"")) + "\"traceEvents\":[]}");
  ASSERT_TRUE(root.has("otherData"));
  EXPECT_EQ(root.at("otherData").at("events_kept").number, static_cast<double>(kLimit));
  EXPECT_EQ(root.at("otherData").at("events_dropped").number, 25.0);
  recorder.clear();
  EXPECT_EQ(recorder.droppedEvents(), 0u);
}

}  // namespace
}  // namespace peerreduce::testing
