// peerreduce-bench's results: one row per measurement, and the ways it writes them (the table it
// prints, --csv, --json), in nccl-tests' units. No GPU code, so it is unit-tested on machines without one.
#pragma once

#include <string>
#include <vector>

#include "peerreduce/types.h"

namespace peerreduce::bench {

struct Timing {
  double best_us = 0;
  double median_us = 0;
};

struct Row {
  std::string library;    // "peerreduce" or "nccl"
  std::string algorithm;  // peerreduce's choice, or NCCL's version
  Collective collective = Collective::kAllReduce;
  std::size_t bytes = 0;  // nccl-tests' size column (bench/collective_units.h)
  bool in_place = false;
  Timing time;
  double algbw = 0;  // GB/s: bytes / best time
  double busbw = 0;  // GB/s: algbw x the collective's factor
  long long wrong = 0;
  int batch = 0;   // tensors of a batch measurement (0: one tensor)
  int blocks = 0;  // GPU blocks of peerreduce's kernel (SelectionReport::kernel_blocks); 0: not known (NCCL)
};

// Sets algbw and busbw from bytes and the best time, as nccl-tests computes them.
void setBandwidths(Row& row, int ranks);

// What every output names besides the rows.
struct RunInfo {
  int ranks = 1;
  DataType dtype = DataType::kFloat32;
  Collective collective = Collective::kAllReduce;
  int root = 0;  // broadcast's
  int iters = 0;
  int repeats = 0;
  std::string architecture;  // the transport's (e.g. "sm_90"): a tuning table's key
  bool eager = false;        // timed as calls launched back to back, not as a graph's replays
  // The NCCL library's take-table key for the measured world: the architecture, with "-host" where a pair of
  // the communicator's topology is host-staged (nccl/take_table.h); empty: the architecture.
  std::string take_architecture = {};
};

// The first line printed: ranks, dtype, collective (broadcast's root), timing method.
std::string formatHeadline(const RunInfo& info);
// The printed table: peerreduce's rows beside NCCL's time for the same collective, size, placement and
// batch, then NCCL's own rows.
std::string formatTable(const std::vector<Row>& rows);
// --csv: the columns of earlier versions in their order, then collective, root and blocks.
std::string formatCsv(const std::vector<Row>& rows, const RunInfo& info);
// --json: the run's facts (architecture included, so bench/tuning_from_bench.py can key a table by
// it, and the take-table key, for bench/take_table_from_bench.py) and every row, each with its collective.
std::string formatJson(const std::vector<Row>& rows, const RunInfo& info);

}  // namespace peerreduce::bench
