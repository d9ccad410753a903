#include "bench_report.h"

#include <cstdarg>
#include <cstdio>

#include "collective_units.h"

namespace peerreduce::bench {
namespace {

[[gnu::format(printf, 2, 3)]] void appendf(std::string& out, const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  // Every line written here is far below the buffer; a longer one (an odd library path as the
  // algorithm) is cut rather than overflowing.
  if (n > 0)
    out.append(line, static_cast<std::size_t>(n) < sizeof(line) ? static_cast<std::size_t>(n) : sizeof(line) - 1);
}

std::string nameOf(Collective c) { return std::string(collectiveName(c)); }

}  // namespace

void setBandwidths(Row& row, int ranks) {
  row.algbw = row.time.best_us > 0 ? static_cast<double>(row.bytes) / (row.time.best_us * 1e3) : 0.0;  // GB/s
  row.busbw = row.algbw * busBandwidthFactor(row.collective, ranks);
}

std::string formatHeadline(const RunInfo& info) {
  std::string out;
  const std::string what = info.collective == Collective::kBroadcast
                               ? "broadcast from rank " + std::to_string(info.root)
                           : info.collective == Collective::kAllGather ? nameOf(info.collective)
                                                                       : nameOf(info.collective) + ", sum";
  if (info.eager) {
    appendf(out, "# peerreduce-bench: %d ranks, %s, %s; eager, %d calls back to back, best/median of %d runs (us)\n",
            info.ranks, std::string(dataTypeName(info.dtype)).c_str(), what.c_str(), info.iters, info.repeats);
  } else {
    appendf(out, "# peerreduce-bench: %d ranks, %s, %s; graph of %d ops, best/median of %d replays (us)\n", info.ranks,
            std::string(dataTypeName(info.dtype)).c_str(), what.c_str(), info.iters, info.repeats);
  }
  return out;
}

std::string formatTable(const std::vector<Row>& rows) {
  std::string out;
  appendf(out, "# %12s %-8s %-20s %6s %10s %10s %10s %10s %7s %10s %8s\n", "bytes", "place", "algorithm", "blocks",
          "best_us", "median_us", "algbw", "busbw", "#wrong", "nccl_us", "ratio");
  for (const Row& r : rows) {
    if (r.library != "peerreduce") continue;
    double nccl_us = 0;
    for (const Row& n : rows) {
      if (n.library == "nccl" && n.collective == r.collective && n.bytes == r.bytes && n.in_place == r.in_place &&
          n.batch == r.batch) {
        nccl_us = n.time.best_us;
      }
    }
    appendf(out, "  %12zu %-8s %-20s %6d %10.2f %10.2f %10.2f %10.2f %7lld %10.2f %8.3f\n", r.bytes,
            r.in_place ? "in" : "out", r.algorithm.c_str(), r.blocks, r.time.best_us, r.time.median_us, r.algbw,
            r.busbw, r.wrong, nccl_us, nccl_us > 0 ? r.time.best_us / nccl_us : 0.0);
  }
  for (const Row& n : rows) {
    if (n.library != "nccl") continue;
    appendf(out, "  nccl %-4s %12zu %-4s %10.2f us %10.2f GB/s busbw  #wrong %lld\n", n.algorithm.c_str(), n.bytes,
            n.in_place ? "in" : "out", n.time.best_us, n.busbw, n.wrong);
  }
  return out;
}

std::string formatCsv(const std::vector<Row>& rows, const RunInfo& info) {
  // The columns before `collective` are those of every earlier version, in their order.
  std::string out =
      "library,algorithm,ranks,dtype,bytes,in_place,best_us,median_us,algbw_gbps,busbw_gbps,wrong,collective,root,"
      "blocks\n";
  for (const Row& r : rows) {
    appendf(out, "%s,%s,%d,%s,%zu,%d,%.3f,%.3f,%.3f,%.3f,%lld,%s,%d,%d\n", r.library.c_str(), r.algorithm.c_str(),
            info.ranks, std::string(dataTypeName(info.dtype)).c_str(), r.bytes, r.in_place ? 1 : 0, r.time.best_us,
            r.time.median_us, r.algbw, r.busbw, r.wrong, nameOf(r.collective).c_str(), info.root, r.blocks);
  }
  return out;
}

std::string formatJson(const std::vector<Row>& rows, const RunInfo& info) {
  std::string out;
  appendf(out,
          "{\"ranks\":%d,\"dtype\":\"%s\",\"collective\":\"%s\",\"root\":%d,\"architecture\":\"%s\","
          "\"take_architecture\":\"%s\",\"iters\":%d,\"repeats\":%d,\"timing\":\"%s\",\"rows\":[",
          info.ranks, std::string(dataTypeName(info.dtype)).c_str(), nameOf(info.collective).c_str(), info.root,
          info.architecture.c_str(),
          (info.take_architecture.empty() ? info.architecture : info.take_architecture).c_str(), info.iters,
          info.repeats, info.eager ? "eager" : "graph");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    appendf(out,
            "%s{\"library\":\"%s\",\"algorithm\":\"%s\",\"collective\":\"%s\",\"bytes\":%zu,\"in_place\":%s,"
            "\"best_us\":%.3f,\"median_us\":%.3f,\"algbw_gbps\":%.3f,\"busbw_gbps\":%.3f,\"wrong\":%lld,"
            "\"blocks\":%d}",
            i ? "," : "", r.library.c_str(), r.algorithm.c_str(), nameOf(r.collective).c_str(), r.bytes,
            r.in_place ? "true" : "false", r.time.best_us, r.time.median_us, r.algbw, r.busbw, r.wrong, r.blocks);
  }
  out += "]}\n";
  return out;
}

}  // namespace peerreduce::bench
