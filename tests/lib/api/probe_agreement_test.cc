// The ranks' agreement on failed access probes (api/probe_agreement.h): the verdict every rank reaches
// from the same reports, and every malformed or mismatched report refused with a typed error naming the
// rank and the field.
#include "api/probe_agreement.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text_contains.h"

namespace peerreduce {
namespace {

ProbeReport reportOf(int rank, int world, int attempt, bool connected, const std::vector<int>& failed = {}) {
  auto report = makeProbeReport(rank, world, attempt, connected, failed);
  EXPECT_TRUE(report.isOk()) << report.status().toString();
  return report.isOk() ? *report : ProbeReport{};
}

std::vector<ProbeReport> allConnected(int world, int attempt = 1) {
  std::vector<ProbeReport> reports;
  for (int r = 0; r < world; ++r) reports.push_back(reportOf(r, world, attempt, true));
  return reports;
}

using peerreduce::testing::contains;

// The reports of a world of 3 at the first exchange are refused with `code`, the message containing `part`.
void expectRefused(const std::vector<ProbeReport>& reports, ErrorCode code, const std::string& part) {
  auto decision = decideProbeFallback(reports, 3, 1);
  ASSERT_FALSE(decision.isOk()) << part;
  EXPECT_EQ(decision.status().code(), code) << decision.status().toString();
  EXPECT_TRUE(contains(decision.status().message(), part)) << decision.status().toString();
}

TEST(ProbeAgreement, EveryRankConnectedIsConnected) {
  auto decision = decideProbeFallback(allConnected(4), 4, 1);
  ASSERT_TRUE(decision.isOk()) << decision.status().toString();
  EXPECT_EQ(decision->verdict, ProbeVerdict::kConnected);
  EXPECT_TRUE(decision->pair_list.empty());
}

TEST(ProbeAgreement, AOneSidedFailureMakesTheSymmetricPairFallBackAndNamesWhoSawIt) {
  auto reports = allConnected(4);
  reports[2] = reportOf(2, 4, 1, false, {0, 3});
  auto decision = decideProbeFallback(reports, 4, 1);
  ASSERT_TRUE(decision.isOk()) << decision.status().toString();
  EXPECT_EQ(decision->verdict, ProbeVerdict::kFallBack);
  EXPECT_EQ(decision->pair_list, (std::vector<std::pair<int, int>>{{0, 2}, {2, 3}}));
  EXPECT_EQ(decision->replacing, (std::vector<int>{0, 2, 3}));
  std::vector<std::uint8_t> expected(16, 0);
  expected[0 * 4 + 2] = expected[2 * 4 + 0] = expected[2 * 4 + 3] = expected[3 * 4 + 2] = 1;
  EXPECT_EQ(decision->pairs, expected);
  EXPECT_EQ(decision->describe(), "0-2,2-3 (rank 2's probe of rank 0, rank 2's probe of rank 3)");
}

TEST(ProbeAgreement, BothSidesFailingOnePairIsOnePair) {
  auto reports = allConnected(2);
  reports[0] = reportOf(0, 2, 1, false, {1});
  reports[1] = reportOf(1, 2, 1, false, {0});
  auto decision = decideProbeFallback(reports, 2, 1);
  ASSERT_TRUE(decision.isOk());
  EXPECT_EQ(decision->pair_list, (std::vector<std::pair<int, int>>{{0, 1}}));
}

TEST(ProbeAgreement, AnotherFailureAnywhereWinsOverFallingBack) {
  auto reports = allConnected(3);
  reports[0] = reportOf(0, 3, 1, false, {1});
  reports[2] = reportOf(2, 3, 1, false);  // failed, but not on a probe
  auto decision = decideProbeFallback(reports, 3, 1);
  ASSERT_TRUE(decision.isOk());
  EXPECT_EQ(decision->verdict, ProbeVerdict::kOtherError);
}

TEST(ProbeAgreement, ProbesFailingAtTheSecondExchangeFailNamingThePairsAndBothExchanges) {
  auto first_reports = allConnected(3);
  first_reports[1] = reportOf(1, 3, 1, false, {2});
  auto first = decideProbeFallback(first_reports, 3, 1);
  ASSERT_TRUE(first.isOk());
  auto second_reports = allConnected(3, 2);
  second_reports[2] = reportOf(2, 3, 2, false, {1});
  auto second = decideProbeFallback(second_reports, 3, 2, *first);
  ASSERT_FALSE(second.isOk());
  EXPECT_EQ(second.status().code(), ErrorCode::kUnavailable);
  const std::string text = second.status().message();
  EXPECT_TRUE(contains(text, "pairs 1-2 (rank 2's probe of rank 1) at exchange 2")) << text;
  EXPECT_TRUE(contains(text, "exchange 1 had failed on pairs 1-2 (rank 1's probe of rank 2)")) << text;
  // Connected at the second exchange: done.
  auto ok = decideProbeFallback(allConnected(3, 2), 3, 2, *first);
  ASSERT_TRUE(ok.isOk());
  EXPECT_EQ(ok->verdict, ProbeVerdict::kConnected);
}

TEST(ProbeAgreement, MalformedReportsAreCorruptNamingTheRankAndField) {
  const auto expectCorrupt = [](const std::vector<ProbeReport>& reports, const std::string& part) {
    expectRefused(reports, ErrorCode::kCorrupt, "rank 1's access-probe report: " + part);
  };
  auto reports = allConnected(3);
  reports[1].magic = 0;
  expectCorrupt(reports, "bad magic");
  reports = allConnected(3);
  reports[1].version = 9;
  expectCorrupt(reports, "version 9");
  reports = allConnected(3);
  reports[1].connected = 0;
  reports[1].failed_peers[0] = std::uint64_t{1} << 5;  // outside the world
  expectCorrupt(reports, "names peer 5 in a world of 3");
  reports[1].failed_peers[0] = std::uint64_t{1} << 1;  // itself
  expectCorrupt(reports, "names peer 1");
  reports = allConnected(3);
  reports[1].failed_peers[0] = 1;  // failures from a rank that connected
  expectCorrupt(reports, "failed probes from a rank that connected");
  reports = allConnected(3);
  reports[1].connected = 7;
  expectCorrupt(reports, "connected field 7");
}

TEST(ProbeAgreement, ReportsFromRanksInAnotherStateAreMismatched) {
  const auto expectMismatch = [](const std::vector<ProbeReport>& reports, const std::string& part) {
    expectRefused(reports, ErrorCode::kMismatch, "rank 2's access-probe report: " + part);
  };
  auto reports = allConnected(3);
  reports[2].rank = 0;
  expectMismatch(reports, "names rank 0");
  reports = allConnected(3);
  reports[2].world_size = 4;
  expectMismatch(reports, "world size 4");
  reports = allConnected(3);
  reports[2].attempt = 2;
  expectMismatch(reports, "exchange 2, this rank is at exchange 1");
}

TEST(ProbeAgreement, BadArgumentsAreRefused) {
  EXPECT_EQ(decideProbeFallback(allConnected(3), 4, 1).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(decideProbeFallback(allConnected(3), 3, 3).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(decideProbeFallback(allConnected(3), 3, 0).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(makeProbeReport(0, 3, 1, false, {3}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(makeProbeReport(0, 3, 1, false, {0}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(makeProbeReport(0, 3, 1, false, {-1}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(makeProbeReport(0, 3, 1, true, {1}).status().code(), ErrorCode::kInvalidArgument);
  // The largest world: every bit of the record is usable.
  auto wide = makeProbeReport(0, kMaxWorldSize, 1, false, {kMaxWorldSize - 1});
  ASSERT_TRUE(wide.isOk());
  EXPECT_EQ(wide->failed_peers[kProbeReportWords - 1] >> 63, 1u);
}

}  // namespace
}  // namespace peerreduce
