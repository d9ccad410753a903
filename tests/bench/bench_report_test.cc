// peerreduce-bench's outputs (bench/bench_report.h): nccl-tests' bandwidths per collective, the
// collective in the CSV and JSON, earlier CSV columns kept in their order, and NCCL's time beside
// peerreduce's only for the same collective, size and placement.
#include "bench_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "text_contains.h"

namespace peerreduce::bench {
namespace {

using peerreduce::testing::contains;

Row rowOf(const char* library, Collective collective, std::size_t bytes, double best_us, bool in_place = false) {
  Row r;
  r.library = library;
  r.algorithm = library[0] == 'n' ? "2.28.9" : "ring";
  r.collective = collective;
  r.bytes = bytes;
  r.in_place = in_place;
  r.time = Timing{best_us, best_us * 1.5};
  setBandwidths(r, 4);
  return r;
}

TEST(BenchReport, BandwidthsAreNcclTestsPerCollective) {
  // 1 MB in 10 us: algbw 100 GB/s.
  EXPECT_DOUBLE_EQ(rowOf("peerreduce", Collective::kAllReduce, 1000000, 10).algbw, 100.0);
  EXPECT_DOUBLE_EQ(rowOf("peerreduce", Collective::kAllReduce, 1000000, 10).busbw, 150.0);
  EXPECT_DOUBLE_EQ(rowOf("peerreduce", Collective::kReduceScatter, 1000000, 10).busbw, 75.0);
  EXPECT_DOUBLE_EQ(rowOf("peerreduce", Collective::kAllGather, 1000000, 10).busbw, 75.0);
  EXPECT_DOUBLE_EQ(rowOf("peerreduce", Collective::kBroadcast, 1000000, 10).busbw, 100.0);
  EXPECT_DOUBLE_EQ(rowOf("peerreduce", Collective::kBroadcast, 1000000, 0).algbw, 0.0) << "an untimed row";
}

TEST(BenchReport, CsvKeepsEarlierColumnsAndAddsTheCollective) {
  const RunInfo info{4, DataType::kBFloat16, Collective::kBroadcast, 2, 20, 5, "sm_90"};
  const std::string csv = formatCsv({rowOf("peerreduce", Collective::kBroadcast, 4096, 2)}, info);
  EXPECT_EQ(csv,
            "library,algorithm,ranks,dtype,bytes,in_place,best_us,median_us,algbw_gbps,busbw_gbps,wrong,collective,"
            "root,blocks\n"
            "peerreduce,ring,4,bf16,4096,0,2.000,3.000,2.048,2.048,0,broadcast,2,0\n");
}

TEST(BenchReport, JsonNamesTheCollectiveOfTheRunAndOfEveryRow) {
  const RunInfo info{4, DataType::kFloat32, Collective::kReduceScatter, 0, 20, 5, "sm_90"};
  Row wrong = rowOf("nccl", Collective::kReduceScatter, 65536, 8, true);
  wrong.wrong = 3;
  Row ours = rowOf("peerreduce", Collective::kReduceScatter, 65536, 4);
  ours.blocks = 12;
  const std::string json = formatJson({ours, wrong}, info);
  EXPECT_TRUE(contains(json,
                       "{\"ranks\":4,\"dtype\":\"fp32\",\"collective\":\"reduce-scatter\",\"root\":0,"
                       "\"architecture\":\"sm_90\",\"take_architecture\":\"sm_90\",\"iters\":20,\"repeats\":5,"
                       "\"timing\":\"graph\",\"rows\":["))
      << json;
  RunInfo staged = info;
  staged.take_architecture = "sm_90-host";
  EXPECT_TRUE(contains(formatJson({ours}, staged), "\"architecture\":\"sm_90\",\"take_architecture\":\"sm_90-host\","))
      << "a host-staged world: the take table's own key, the tuning table's unchanged";
  RunInfo eager = info;
  eager.eager = true;
  EXPECT_TRUE(contains(formatJson({ours}, eager), "\"repeats\":5,\"timing\":\"eager\",\"rows\":[")) << "--eager";
  EXPECT_TRUE(contains(json,
                       "{\"library\":\"peerreduce\",\"algorithm\":\"ring\",\"collective\":\"reduce-scatter\","
                       "\"bytes\":65536,\"in_place\":false,\"best_us\":4.000"))
      << json;
  EXPECT_TRUE(contains(json,
                       "\"library\":\"nccl\",\"algorithm\":\"2.28.9\",\"collective\":\"reduce-scatter\","
                       "\"bytes\":65536,\"in_place\":true"))
      << json;
  EXPECT_TRUE(contains(json, "\"wrong\":0,\"blocks\":12}")) << json;
  EXPECT_TRUE(contains(json, "\"wrong\":3,\"blocks\":0}]}\n")) << json;
}

TEST(BenchReport, TheTablePutsNcclsTimeBesideTheSameCollectiveSizeAndPlacement) {
  std::vector<Row> rows = {
      rowOf("peerreduce", Collective::kAllGather, 4096, 3), rowOf("peerreduce", Collective::kAllGather, 4096, 4, true),
      rowOf("nccl", Collective::kAllGather, 4096, 6), rowOf("nccl", Collective::kAllReduce, 4096, 1, true)};
  rows[0].blocks = 24;
  const std::string table = formatTable(rows);
  // Out of place: NCCL 6 us, ratio 0.5; in place: NCCL has no all-gather row, so no ratio.
  EXPECT_TRUE(contains(table, "        4096 out      ring                     24       3.00")) << table;
  EXPECT_TRUE(contains(table, "blocks    best_us")) << table;
  EXPECT_TRUE(contains(table, "      6.00    0.500\n")) << table;
  EXPECT_TRUE(contains(table, "      0.00    0.000\n")) << table;
  EXPECT_TRUE(contains(table, "  nccl 2.28.9         4096 out        6.00 us")) << table;
  const RunInfo info{2, DataType::kFloat32, Collective::kBroadcast, 1, 20, 5, "sm_90"};
  EXPECT_EQ(formatHeadline(info),
            "# peerreduce-bench: 2 ranks, fp32, broadcast from rank 1; graph of 20 ops, best/median of 5 replays "
            "(us)\n");
  EXPECT_TRUE(contains(formatHeadline(RunInfo{2, DataType::kFloat32, Collective::kAllReduce, 0, 20, 5, "sm_90"}),
                       "2 ranks, fp32, allreduce, sum;"));
  EXPECT_EQ(formatHeadline(RunInfo{2, DataType::kFloat32, Collective::kAllReduce, 0, 20, 5, "sm_90", true}),
            "# peerreduce-bench: 2 ranks, fp32, allreduce, sum; eager, 20 calls back to back, best/median of 5 runs "
            "(us)\n");
}

}  // namespace
}  // namespace peerreduce::bench
