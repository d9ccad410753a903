// peerreduce-sim: runs an allreduce (or reduce-scatter, all-gather, broadcast: collective_run.cc) on
// simulated GPUs, checks it, and says what ran; predict, campaign and settings besides.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "campaign.h"
#include "cli/cli_options.h"
#include "cli/cli_run.h"
#include "cli/multi_machine_command.h"
#include "cli/plan_command.h"
#include "cli/settings_command.h"
#include "json_text.h"
#include "peerreduce/communicator.h"
#include "reference/reference.h"
#include "sim_cluster.h"
#include "topology/device_profiles.h"
#include "topology/generators.h"
#include "topology/routes.h"
#include "topology/topology_file.h"
#include "util/log.h"

namespace peerreduce::sim {
namespace {

Status runAllreduce(RunReport& report) {
  const CliOptions& o = report.options;
  PR_ASSIGN_OR_RETURN(auto cluster, createRunCluster(report));
  const std::size_t elem = dataTypeSize(o.dtype);
  const std::size_t bytes = o.count * elem;
  const int n = o.ranks;
  // Each rank: [guard][send][guard] and [guard][recv][guard] (recv unused when in place).
  std::vector<std::vector<unsigned char>> send(static_cast<std::size_t>(n)), recv(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    auto& s = send[static_cast<std::size_t>(r)];
    auto& d = recv[static_cast<std::size_t>(r)];
    s.assign(bytes + 2 * kGuardBytes, kGuardByte);
    d.assign(o.in_place ? 0 : bytes + 2 * kGuardBytes, kGuardByte);
    testing::fillPayload(o.dtype, o.op, o.seed, r, s.data() + kGuardBytes, o.count);
  }
  std::vector<std::vector<unsigned char>> inputs = send;  // pristine copies for the reference
  for (int it = 0; it < o.iterations; ++it) {
    for (int r = 0; r < n; ++r) {
      auto& s = send[static_cast<std::size_t>(r)];
      if (o.in_place && it > 0)
        std::memcpy(s.data() + kGuardBytes, inputs[static_cast<std::size_t>(r)].data() + kGuardBytes, bytes);
      void* out = o.in_place ? s.data() + kGuardBytes : recv[static_cast<std::size_t>(r)].data() + kGuardBytes;
      PR_RETURN_IF_ERROR(cluster->comm(r).allreduce(s.data() + kGuardBytes, out, o.count, o.dtype, o.op));
    }
    // Iterations are run one at a time so an in-place input can be restored between them.
    if (o.in_place) PR_RETURN_IF_ERROR(cluster->runUntilIdle());
  }
  PR_RETURN_IF_ERROR(cluster->runUntilIdle());
  PR_RETURN_IF_ERROR(collectRunStats(*cluster, report));

  // Verdict: guards intact, every rank bitwise equal, equal to the reference, no race.
  auto output = [&](int r) -> const unsigned char* {
    return (o.in_place ? send : recv)[static_cast<std::size_t>(r)].data() + kGuardBytes;
  };
  for (int r = 0; r < n; ++r) {
    if (guardsBroken(send[static_cast<std::size_t>(r)]) || guardsBroken(recv[static_cast<std::size_t>(r)])) {
      fail(report, "rank " + std::to_string(r) + " wrote outside its buffer");
    }
    if (!o.in_place && std::memcmp(send[static_cast<std::size_t>(r)].data(), inputs[static_cast<std::size_t>(r)].data(),
                                   send[static_cast<std::size_t>(r)].size()) != 0) {
      fail(report, "rank " + std::to_string(r) + "'s send buffer was modified");
    }
    if (bytes > 0 && std::memcmp(output(r), output(0), bytes) != 0) {
      report.ranks_agree = false;
      fail(report, "rank " + std::to_string(r) + "'s result differs from rank 0's bits");
    }
  }
  if (o.count > 0) {
    std::vector<const void*> ins;
    for (int r = 0; r < n; ++r) ins.push_back(inputs[static_cast<std::size_t>(r)].data() + kGuardBytes);
    const auto reference = testing::referenceReduce(o.dtype, o.op, ins, o.count);
    report.reference_problem = testing::compareToReference(o.dtype, o.op, reference, output(0), o.count);
    if (!report.reference_problem.empty())
      fail(report, "result differs from the reference: " + report.reference_problem);
  }
  if (!report.races.empty()) fail(report, "happens-before violation: " + report.races.front());
  return Status::ok();
}

std::string mib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

void printText(const RunReport& r) {
  const CliOptions& o = r.options;
  if (o.defaulted) {
    std::printf("No arguments: running the default allreduce (see --help for the options).\n");
  }
  const bool reduces = o.collective == Collective::kAllReduce || o.collective == Collective::kReduceScatter;
  const std::string root = o.collective == Collective::kBroadcast ? " from root " + std::to_string(o.root) : "";
  std::printf("peerreduce-sim: %s of %zu x %s%s%s per rank on %d simulated ranks, seed %" PRIu64 "%s\n",
              std::string(collectiveName(o.collective)).c_str(), o.count, std::string(dataTypeName(o.dtype)).c_str(),
              reduces ? (" " + std::string(reduceOpName(o.op))).c_str() : "", root.c_str(), o.ranks, o.seed,
              o.in_place ? ", in place" : "");
  std::printf("  reproduce:   %s\n", cliCommandLine(o).c_str());
  std::printf("  topology:    %s\n", r.topology.c_str());
  std::printf("  algorithm:   %s (%s)\n", std::string(algorithmName(r.selection.chosen)).c_str(),
              r.selection.forced      ? "forced by --algo or a PEERREDUCE_ALGO* setting"
              : r.selection.plan_file ? "the plan file, chosen by its size range (PEERREDUCE_PLAN_FILE)"
              : r.selection.tuned     ? "chosen by the tuning table (PEERREDUCE_TUNING_FILE)"
                                      : "the cheapest candidate in the cost model");
  std::printf("  route:       %s\n", r.plan_description.c_str());
  std::printf("  candidates:  ");
  for (const auto& c : r.selection.candidates) {
    const std::string segments = c.segments > 1 ? " (" + std::to_string(c.segments) + " segments)" : "";
    std::printf("%s %.2f us%s; ", c.plan.empty() ? std::string(algorithmName(c.algorithm)).c_str() : c.plan.c_str(),
                c.predicted_us, segments.c_str());
  }
  for (const auto& why : r.selection.excluded) std::printf("\n  excluded:    %s", why.c_str());
  std::printf("\n  executed:    %" PRIu64 " steps in %" PRIu64 " plan executions over all ranks\n", r.stats.steps,
              r.stats.operations);
  std::uint64_t total = 0, peak = 0;
  int peak_from = 0, peak_to = 0, links = 0;
  const int n = o.ranks;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      const std::uint64_t v = r.stats.link_bytes[static_cast<std::size_t>(a * n + b)];
      if (a == b || v == 0) continue;
      total += v;
      ++links;
      if (v > peak) {
        peak = v;
        peak_from = a;
        peak_to = b;
      }
    }
  }
  if (links == 0) {
    std::printf("  link bytes:  none (no rank read or wrote a peer's memory)\n");
  } else {
    std::printf("  link bytes:  %s over %d links, busiest %d->%d with %s\n", mib(total).c_str(), links, peak_from,
                peak_to, mib(peak).c_str());
  }
  if (n <= 8) {
    std::printf("               bytes rank (row) moved in rank (column)'s memory:\n");
    for (int a = 0; a < n; ++a) {
      std::printf("               ");
      for (int b = 0; b < n; ++b) {
        std::printf("%12" PRIu64, r.stats.link_bytes[static_cast<std::size_t>(a * n + b)]);
      }
      std::printf("\n");
    }
  }
  std::printf("  time:        predicted %.2f us by the cost model; simulated %.2f us of virtual time\n",
              r.predicted_us * o.iterations, r.stats.virtual_time_us);
  std::printf("  races:       %s\n", r.races.empty() ? "none (happens-before checked)" : r.races.front().c_str());
  std::printf("  ranks agree: %s\n", o.collective == Collective::kReduceScatter
                                         ? "each rank holds its own block (checked against the reference)"
                                     : r.ranks_agree ? "bitwise identical on every rank"
                                                     : "NO");
  // Integers and the collectives that only move data are compared bit for bit; a floating reduction with a
  // tolerance, since the reference folds in an order of its own (the ranks' bits are compared above).
  const bool exact = !reduces || !isFloatingPoint(o.dtype);
  std::printf("  reference:   %s\n", !r.reference_problem.empty() ? r.reference_problem.c_str()
                                     : exact                      ? "every element equal to the reference, bit for bit"
                                                                  : "every element within tolerance");
  const PoolStats& m = r.memory;
  std::printf("  memory:      pool %s per rank, %s in use (peak %s) in %" PRIu64 " blocks; %" PRIu64
              " allocations, %" PRIu64 " failed; %" PRIu64 " free blocks, largest %s; fragmentation %.3f; %" PRIu64
              " compactions (in use: the channels' scratch leases and the symmetric blocks)\n",
              mib(m.capacity_bytes).c_str(), mib(m.bytes_in_use).c_str(), mib(m.peak_bytes_in_use).c_str(),
              m.live_blocks, m.allocations, m.failed_allocations, m.free_blocks,
              mib(m.largest_free_block_bytes).c_str(), m.fragmentation, m.defragmentations);
  const PinnedStats& p = r.pinned;
  std::printf("  pinned:      limit %s, %s pinned (peak %s), %s in use in %" PRIu64 " blocks, %s idle; %" PRIu64
              " acquisitions, %" PRIu64 " reuses, %" PRIu64 " evictions, %" PRIu64 " failed; %s staged\n",
              mib(p.limit_bytes).c_str(), mib(p.bytes_pinned).c_str(), mib(p.peak_bytes_pinned).c_str(),
              mib(p.bytes_in_use).c_str(), p.blocks_in_use, mib(p.bytes_idle).c_str(), p.acquisitions, p.reuses,
              p.evictions, p.failures, mib(p.bytes_staged).c_str());
  std::printf("  fingerprint: 0x%016" PRIx64 "\n", r.fingerprint);
  if (!o.trace_path.empty()) std::printf("  trace:       %s (open in ui.perfetto.dev)\n", o.trace_path.c_str());
  std::printf("  verdict:     %s\n", r.verdict.c_str());
}

void printJson(const RunReport& r) {
  const CliOptions& o = r.options;
  const int n = o.ranks;
  std::string links = "[";
  for (int a = 0; a < n && !r.stats.link_bytes.empty(); ++a) {
    links += a ? ",[" : "[";
    for (int b = 0; b < n; ++b) {
      links += (b ? "," : "") + std::to_string(r.stats.link_bytes[static_cast<std::size_t>(a * n + b)]);
    }
    links += "]";
  }
  links += "]";
  std::string candidates = "[";
  for (std::size_t i = 0; i < r.selection.candidates.size(); ++i) {
    const auto& c = r.selection.candidates[i];
    char buf[160];
    std::snprintf(buf, sizeof(buf),
                  "%s{\"algorithm\":\"%s\",\"predicted_time_us\":%.4f,\"segments\":%d,\"plan\":", i ? "," : "",
                  std::string(algorithmName(c.algorithm)).c_str(), c.predicted_us, c.segments);
    candidates += buf + jsonString(c.plan) + "}";
  }
  candidates += "]";
  std::string races = "[";
  for (std::size_t i = 0; i < r.races.size(); ++i) races += (i ? "," : "") + jsonString(r.races[i]);
  races += "]";
  std::string excluded = "[";
  for (std::size_t i = 0; i < r.selection.excluded.size(); ++i)
    excluded += (i ? "," : "") + jsonString(r.selection.excluded[i]);
  excluded += "]";
  char fingerprint[32];
  std::snprintf(fingerprint, sizeof(fingerprint), "0x%016" PRIx64, r.fingerprint);
  const PoolStats& m = r.memory;
  const PinnedStats& p = r.pinned;
  char pinned[512];
  std::snprintf(pinned, sizeof(pinned),
                "{\"limit_bytes\":%" PRIu64 ",\"bytes_pinned\":%" PRIu64 ",\"peak_bytes_pinned\":%" PRIu64
                ",\"bytes_in_use\":%" PRIu64 ",\"bytes_idle\":%" PRIu64 ",\"blocks_in_use\":%" PRIu64
                ",\"blocks_idle\":%" PRIu64 ",\"acquisitions\":%" PRIu64 ",\"reuses\":%" PRIu64
                ",\"evictions\":%" PRIu64 ",\"failures\":%" PRIu64 ",\"bytes_staged\":%" PRIu64 "}",
                p.limit_bytes, p.bytes_pinned, p.peak_bytes_pinned, p.bytes_in_use, p.bytes_idle, p.blocks_in_use,
                p.blocks_idle, p.acquisitions, p.reuses, p.evictions, p.failures, p.bytes_staged);
  char memory[1280];
  std::snprintf(memory, sizeof(memory),
                "{\"capacity_bytes\":%" PRIu64 ",\"quota_bytes\":%" PRIu64 ",\"bytes_in_use\":%" PRIu64
                ",\"peak_bytes_in_use\":%" PRIu64 ",\"live_blocks\":%" PRIu64 ",\"allocations\":%" PRIu64
                ",\"failed_allocations\":%" PRIu64 ",\"free_blocks\":%" PRIu64 ",\"largest_free_block_bytes\":%" PRIu64
                ",\"fragmentation\":%.6f,\"defragmentations\":%" PRIu64 ",\"blocks_moved\":%" PRIu64 ",\"pinned\":%s}",
                m.capacity_bytes, m.quota_bytes, m.bytes_in_use, m.peak_bytes_in_use, m.live_blocks, m.allocations,
                m.failed_allocations, m.free_blocks, m.largest_free_block_bytes, m.fragmentation, m.defragmentations,
                m.blocks_moved, pinned);
  std::printf(
      "{\"collective\":\"%s\",\"root\":%d,\"algorithm\":\"%s\",\"forced\":%s,\"ranks\":%d,\"count\":%zu,\"dtype\":\"%"
      "s\",\"op\":\"%s\",\"in_place\":%s,"
      "\"seed\":%" PRIu64
      ",\"iterations\":%d,\"verdict\":%s,\"predicted_time_us\":%.4f,\"simulated_time_us\":%.4f,"
      "\"steps\":%" PRIu64 ",\"plan_executions\":%" PRIu64
      ",\"ranks_agree\":%s,\"races\":%s,\"candidates\":%s,"
      "\"link_bytes\":%s,\"topology\":%s,\"route\":%s,\"excluded\":%s,\"memory\":%s,\"trace_fingerprint\":\"%s\","
      "\"command\":%s}\n",
      std::string(collectiveName(o.collective)).c_str(), o.root, std::string(algorithmName(r.selection.chosen)).c_str(),
      r.selection.forced ? "true" : "false", n, o.count, std::string(dataTypeName(o.dtype)).c_str(),
      std::string(reduceOpName(o.op)).c_str(), o.in_place ? "true" : "false", o.seed, o.iterations,
      jsonString(r.verdict).c_str(), r.predicted_us * o.iterations, r.stats.virtual_time_us, r.stats.steps,
      r.stats.operations, r.ranks_agree ? "true" : "false", races.c_str(), candidates.c_str(), links.c_str(),
      jsonString(r.topology).c_str(), jsonString(r.plan_description).c_str(), excluded.c_str(), memory, fingerprint,
      jsonString(cliCommandLine(o)).c_str());
}

std::string sizeName(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

}  // namespace

// `predict`: the cost model's time of every candidate at 4 KiB .. 256 MiB and the selector's pick, as a
// Markdown table (docs/ALGORITHMS.md is made with it).
Status runPredict(const CliOptions& o) {
  SimOptions sim_options;
  sim_options.seed = o.seed;
  PR_ASSIGN_OR_RETURN(sim_options.topology, simulatedTopology(o));
  PR_ASSIGN_OR_RETURN(Config config, cliConfig(o));
  auto created = SimCluster::create(o.ranks, sim_options, config);
  if (!created.isOk()) return forcedAlgorithmContext(o, created.status());
  auto cluster = std::move(created).value();
  const std::size_t elem = dataTypeSize(o.dtype);
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = std::size_t{4} << 10; bytes <= (std::size_t{256} << 20); bytes *= 4) sizes.push_back(bytes);
  std::vector<SelectionReport> reports;
  for (std::size_t bytes : sizes) {
    PR_ASSIGN_OR_RETURN(auto report, cluster->comm(0).explainSelection(o.collective, bytes / elem, o.dtype, o.root));
    reports.push_back(std::move(report));
  }
  // Columns: every candidate, in the order of the smallest size's report (the same set at every size).
  // Headers are algorithm names; variants of one algorithm (tree pipelines) add the last clause of
  // their description. The full descriptions follow the table.
  std::vector<std::pair<int, std::string>> columns;
  std::vector<std::pair<int, std::string>> descriptions;
  for (const auto& c : reports.front().candidates) {
    int same = 0;
    for (const auto& other : reports.front().candidates) same += other.algorithm == c.algorithm ? 1 : 0;
    std::string header(algorithmName(c.algorithm));
    const auto clause = c.plan.rfind(", ");
    if (same > 1 && clause != std::string::npos) header += " (" + c.plan.substr(clause + 2) + ")";
    columns.emplace_back(c.candidate, header);
    const bool plan_names_itself = c.plan.rfind(std::string(algorithmName(c.algorithm)), 0) == 0;
    descriptions.emplace_back(c.candidate, plan_names_itself && same == 1 ? c.plan : header + ": " + c.plan);
  }
  std::sort(columns.begin(), columns.end());
  std::sort(descriptions.begin(), descriptions.end());
  auto pickedName = [&](const SelectionReport& report) {
    std::string picked(algorithmName(report.chosen));
    for (const auto& c : report.candidates) {
      if (c.algorithm != report.chosen || c.plan != report.plan) continue;
      for (const auto& [index, name] : columns) picked = index == c.candidate ? name : picked;
    }
    return picked;
  };
  if (o.json) {
    // Full precision for scripts (bench/calibrate_model.py fits the model through it); candidates
    // are named like the table's columns.
    std::string out = "{\"collective\":" + jsonString(std::string(collectiveName(o.collective))) +
                      ",\"root\":" + std::to_string(o.root) + ",\"ranks\":" + std::to_string(o.ranks) +
                      ",\"dtype\":" + jsonString(std::string(dataTypeName(o.dtype))) +
                      ",\"topology\":" + jsonString(o.topology.empty() ? "full-mesh" : o.topology) +
                      ",\"device\":" + jsonString(o.device) + ",\"sizes\":[";
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      out += (i ? ",{" : "{") + std::string("\"bytes\":") + std::to_string(sizes[i]) +
             ",\"picked\":" + jsonString(pickedName(reports[i])) + ",\"candidates\":[";
      bool first = true;
      for (const auto& [index, name] : columns) {
        for (const auto& c : reports[i].candidates) {
          if (c.candidate != index) continue;
          char buf[96];
          std::snprintf(buf, sizeof(buf), ",\"predicted_time_us\":%.6f,\"segments\":%d}", c.predicted_us, c.segments);
          out += (first ? "{\"name\":" : ",{\"name\":") + jsonString(name) + buf;
          first = false;
        }
      }
      out += "]}";
    }
    std::printf("%s]}\n", out.c_str());
    return Status::ok();
  }
  std::printf("Predicted time (us) of each candidate of %s%s, %d ranks, %s, topology %s%s%s%s%s\n\n",
              std::string(collectiveName(o.collective)).c_str(),
              o.collective == Collective::kBroadcast ? (" from root " + std::to_string(o.root)).c_str() : "", o.ranks,
              std::string(dataTypeName(o.dtype)).c_str(), o.topology.empty() ? "full-mesh" : o.topology.c_str(),
              o.device.empty() ? "" : ", device ", o.device.c_str(), o.mask.empty() ? "" : ", mask ", o.mask.c_str());
  std::printf("| size |");
  for (const auto& [index, name] : columns) std::printf(" %s |", name.c_str());
  std::printf(" picked |\n|---|");
  for (std::size_t i = 0; i < columns.size(); ++i) std::printf("---:|");
  std::printf("---|\n");
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::printf("| %s |", sizeName(sizes[i]).c_str());
    for (const auto& [index, name] : columns) {
      const AlgorithmEstimate* found = nullptr;
      for (const auto& c : reports[i].candidates) found = c.candidate == index ? &c : found;
      if (found == nullptr) {
        std::printf(" - |");
      } else if (found->segments > 1) {
        std::printf(" %.1f (%d segments) |", found->predicted_us, found->segments);
      } else {
        std::printf(" %.1f |", found->predicted_us);
      }
    }
    std::printf(" %s%s |\n", pickedName(reports[i]).c_str(),
                reports[i].forced      ? " (forced)"
                : reports[i].plan_file ? " (plan file)"
                : reports[i].tuned     ? " (tuning table)"
                                       : "");
  }
  std::printf("\n");
  for (const auto& [index, text] : descriptions) std::printf("- %s\n", text.c_str());
  for (const auto& why : reports.front().excluded) std::printf("\nexcluded: %s", why.c_str());
  std::printf("\n");
  return Status::ok();
}

int runAndReport(const CliOptions& options) {
  RunReport report;
  report.options = options;
  Status status;
  try {
    status = options.collective == Collective::kAllReduce ? runAllreduce(report) : runCollective(report);
  } catch (const std::bad_alloc&) {
    status = outOfMemoryError("not enough host memory to simulate " + std::to_string(options.ranks) + " ranks x " +
                              std::to_string(options.count) + " elements; use a smaller --count or --ranks");
  } catch (const std::exception& e) {
    status = internalError(std::string("unexpected exception: ") + e.what());
  }
  if (!status.isOk()) {
    report.verdict = status.toString();
    if (options.json) {
      printJson(report);
    } else {
      std::fprintf(stderr, "peerreduce-sim: %s\n", status.toString().c_str());
    }
    const bool bad_input = status.code() == ErrorCode::kInvalidArgument || status.code() == ErrorCode::kOutOfMemory;
    return bad_input ? kExitBadInput : kExitWrong;
  }
  if (options.json) {
    printJson(report);
  } else {
    printText(report);
  }
  return report.verdict == "ok" ? kExitOk : kExitWrong;
}

namespace {

int run(const std::vector<std::string>& args) {
  auto parsed = parseCliOptions(args);
  const bool json = [&] {
    for (const auto& a : args) {
      if (a == "--json") return true;
    }
    return false;
  }();
  if (!parsed.isOk()) {
    if (json) {
      std::printf("{\"verdict\":%s}\n", jsonString(parsed.status().toString()).c_str());
    }
    std::fprintf(stderr, "peerreduce-sim: %s\n%s", parsed.status().toString().c_str(), cliUsage().c_str());
    return kExitBadInput;
  }
  if (parsed->command == CliCommand::kHelp) {
    std::printf("%s", cliUsage().c_str());
    return kExitOk;
  }
  if (parsed->machines > 0) return multiMachineMain(*parsed);
  if (parsed->command == CliCommand::kPredict) {
    const Status predicted = runPredict(*parsed);
    if (predicted.isOk()) return kExitOk;
    std::fprintf(stderr, "peerreduce-sim: %s\n", predicted.toString().c_str());
    return predicted.code() == ErrorCode::kInvalidArgument ? kExitBadInput : kExitWrong;
  }
  return runAndReport(*parsed);
}

}  // namespace
}  // namespace peerreduce::sim

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // The fault campaign has options of its own (sim/campaign/campaign.h); the allreduce path is unchanged.
  if (!args.empty() && args[0] == "campaign") {
    return peerreduce::sim::campaign::campaignMain(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (!args.empty() && args[0] == "plan") {
    return peerreduce::sim::planMain(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (!args.empty() && args[0] == "settings") {
    return peerreduce::sim::settingsMain(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  return peerreduce::sim::run(args);
}
