// The campaign's worker processes: results cross the pipe intact, malformed bytes are refused, a
// batch run in workers equals the same batch run in-process, and a worker past its deadline is
// reported instead of waited on.
#include "campaign_workers.h"

#include <gtest/gtest.h>

namespace peerreduce::sim::campaign {
namespace {

ScenarioResult sample() {
  ScenarioResult r;
  r.seed = 42;
  r.safety_ok = false;
  r.liveness_ok = true;
  r.problem = "safety: op 1 rank 2: reported success with a wrong result";
  r.ops_ok = 3;
  r.ops_failed = 1;
  r.creation_refusals = 2;
  r.shrinks = 1;
  r.kinds[4].injected = 1;
  r.kinds[4].recovery_us = 123.5;
  r.kinds[4].max_recovery_us = 123.5;
  r.error_codes[3] = 7;
  r.buggify_fired = 9;
  r.fingerprint = 0x1234567890abcdefull;
  return r;
}

TEST(CampaignWorkers, AResultSurvivesTheWireFormat) {
  const ScenarioResult r = sample();
  std::vector<std::byte> bytes = encodeResult(r);
  const std::vector<std::byte> second = encodeResult(sample());
  bytes.insert(bytes.end(), second.begin(), second.end());
  std::size_t offset = 0;
  for (int i = 0; i < 2; ++i) {
    ScenarioResult back;
    ASSERT_TRUE(decodeResult(bytes, &offset, &back));
    EXPECT_EQ(back.seed, r.seed);
    EXPECT_EQ(back.safety_ok, r.safety_ok);
    EXPECT_EQ(back.liveness_ok, r.liveness_ok);
    EXPECT_EQ(back.problem, r.problem);
    EXPECT_EQ(back.ops_ok, r.ops_ok);
    EXPECT_EQ(back.kinds[4].recovery_us, 123.5);
    EXPECT_EQ(back.error_codes[3], 7);
    EXPECT_EQ(back.fingerprint, r.fingerprint);
  }
  EXPECT_EQ(offset, bytes.size());
}

TEST(CampaignWorkers, TruncatedOrMalformedBytesAreRefused) {
  const std::vector<std::byte> whole = encodeResult(sample());
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, whole.size() / 2, whole.size() - 1}) {
    std::vector<std::byte> part(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut));
    std::size_t offset = 0;
    ScenarioResult r;
    EXPECT_FALSE(decodeResult(part, &offset, &r)) << "cut at " << cut;
    EXPECT_EQ(offset, 0u);
  }
  std::vector<std::byte> bad_flags = whole;
  bad_flags[8] = std::byte{0x7f};  // the flags byte follows the 8-byte seed
  std::size_t offset = 0;
  ScenarioResult r;
  EXPECT_FALSE(decodeResult(bad_flags, &offset, &r));
}

TEST(CampaignWorkers, WorkersGiveTheSameResultsAsOneProcess) {
  const ScenarioOptions options;
  auto in_workers = runScenariosInWorkers(20, 12, 3, options, 600.0);
  ASSERT_TRUE(in_workers.isOk()) << in_workers.status().toString();
  ASSERT_EQ(in_workers->size(), 12u);
  for (std::uint64_t i = 0; i < 12; ++i) {
    const ScenarioResult here = runScenario(drawScenario(20 + i), options);
    EXPECT_EQ((*in_workers)[i].seed, 20 + i);
    EXPECT_EQ((*in_workers)[i].fingerprint, here.fingerprint) << "seed " << 20 + i;
    EXPECT_EQ((*in_workers)[i].safety_ok, here.safety_ok);
  }
}

TEST(CampaignWorkers, WorkersPastTheDeadlineAreReportedNotWaitedOn) {
  auto late = runScenariosInWorkers(1, 400, 2, ScenarioOptions{}, 0.0);
  ASSERT_FALSE(late.isOk());
  EXPECT_EQ(late.status().code(), ErrorCode::kInternal);
  EXPECT_NE(late.status().message().find("did not finish"), std::string::npos) << late.status().toString();
}

}  // namespace
}  // namespace peerreduce::sim::campaign
