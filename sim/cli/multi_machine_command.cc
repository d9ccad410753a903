// peerreduce-sim across simulated machines: see multi_machine_command.h.
#include "cli/multi_machine_command.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "api/machine_strategy.h"
#include "cli/cli_run.h"
#include "multi_machine_cluster.h"
#include "reference/reference.h"
#include "sim_cluster.h"
#include "topology/machines.h"

namespace peerreduce::sim {
namespace {

struct Setup {
  Topology machine_topology;
  LinkInfo network;
  MachineStrategy strategy = MachineStrategy::kAuto;
  Config config;
};

StatusOr<Setup> setupOf(const CliOptions& o) {
  Setup s;
  CliOptions machine = o;
  machine.ranks = o.ranks_per_machine;
  PR_ASSIGN_OR_RETURN(s.machine_topology, simulatedTopology(machine));
  s.network = networkLink();
  if (!o.network.empty()) {
    PR_ASSIGN_OR_RETURN(s.network, parseNetworkSpec(o.network));
  }
  if (o.strategy == "hierarchical") {
    s.strategy = MachineStrategy::kHierarchical;
  } else if (o.strategy == "flat") {
    s.strategy = MachineStrategy::kFlat;
  } else if (!o.strategy.empty() && o.strategy != "auto") {
    return invalidArgumentError("--strategy '" + o.strategy.substr(0, 32) + "': auto, hierarchical or flat");
  }
  PR_ASSIGN_OR_RETURN(s.config, cliConfig(o));
  return s;
}

std::string phases(Collective collective, const MachineSelection& s, MachineStrategy strategy) {
  if (collective != Collective::kAllReduce) {
    return strategy == MachineStrategy::kFlat ? s.flat_plans : s.hierarchical_plans;
  }
  if (strategy == MachineStrategy::kFlat) {
    return "machine allreduce: " + s.machine_allreduce +
           "; network allreduce of the whole vector: " + s.network_flat_allreduce;
  }
  return "machine reduce-scatter: " + s.machine_reduce_scatter +
         "; network allreduce of each share: " + s.network_allreduce + "; machine all-gather: " + s.machine_all_gather;
}

// predict: one machine world and one network world price every size (every machine and every network
// world of the simulator is alike, so these two give every rank's prices).
Status predict(const CliOptions& o, const Setup& setup) {
  SimOptions machine_options;
  machine_options.topology = setup.machine_topology;
  PR_ASSIGN_OR_RETURN(auto machine, SimCluster::create(o.ranks_per_machine, machine_options, setup.config));
  SimOptions network_options;
  network_options.topology = networkTopology(o.machines, setup.network);
  PR_ASSIGN_OR_RETURN(auto network, SimCluster::create(o.machines, network_options, setup.config));
  const std::size_t elem = dataTypeSize(o.dtype);
  if (o.json) std::printf("{\"machines\":%d,\"ranks_per_machine\":%d,\"sizes\":[", o.machines, o.ranks_per_machine);
  if (!o.json) {
    std::printf("%s across %d machines x %d ranks; machines: %s; network: %s\n",
                std::string(collectiveName(o.collective)).c_str(), o.machines, o.ranks_per_machine,
                machine->comm(0).topology().describe().c_str(), network->comm(0).topology().describe().c_str());
    std::printf("| bytes per rank | hierarchical us | flat us | chosen | plans |\n| --- | --- | --- | --- | --- |\n");
  }
  bool first = true;
  for (std::size_t bytes = std::size_t{4} << 10; bytes <= (std::size_t{256} << 20); bytes *= 4) {
    // Ranks placed machine by machine, as the simulator's worlds are unless interleaved.
    const MachineShape shape{o.machines, o.ranks_per_machine, true};
    PR_ASSIGN_OR_RETURN(
        const MachineSelection s,
        o.collective == Collective::kAllReduce
            ? predictMachineStrategies(machine->comm(0), network->comm(0), o.ranks_per_machine, bytes / elem, o.dtype)
            : predictMachineCollective(o.collective, machine->comm(0), network->comm(0), shape, bytes / elem, o.dtype));
    const MachineStrategy chosen = setup.strategy == MachineStrategy::kAuto ? s.chosen : setup.strategy;
    if (o.json) {
      std::printf("%s{\"bytes\":%zu,\"hierarchical_us\":%.4f,\"flat_us\":%.4f,\"chosen\":\"%s\"}", first ? "" : ",",
                  bytes, s.hierarchical_us, s.flat_us, machineStrategyName(chosen));
    } else {
      std::printf("| %zu | %.1f | %.1f | %s | %s |\n", bytes, s.hierarchical_us, s.flat_us, machineStrategyName(chosen),
                  phases(o.collective, s, chosen).c_str());
    }
    first = false;
  }
  if (o.json) std::printf("]}\n");
  return Status::ok();
}

struct RunResult {
  std::string verdict = "ok";
  MachineSelection selection;
  MachineStrategy chosen = MachineStrategy::kHierarchical;
  double simulated_us = 0.0;
};

MultiMachineSimOptions simOptionsOf(const CliOptions& o, const Setup& setup) {
  MultiMachineSimOptions options;
  options.machines = o.machines;
  options.ranks_per_machine = o.ranks_per_machine;
  options.machine_topology = setup.machine_topology;
  options.network = setup.network;
  options.seed = o.seed;
  options.race_checking = o.race_checking;
  return options;
}

Status runAllreduce(const CliOptions& o, const Setup& setup, RunResult& result) {
  PR_ASSIGN_OR_RETURN(auto cluster, MultiMachineSimCluster::create(simOptionsOf(o, setup), setup.config));
  const int n = cluster->size();
  PR_ASSIGN_OR_RETURN(result.selection, cluster->comm(0).explainSelection(o.count, o.dtype));
  result.chosen = setup.strategy == MachineStrategy::kAuto ? result.selection.chosen : setup.strategy;
  const std::size_t bytes = o.count * dataTypeSize(o.dtype);
  std::vector<std::vector<unsigned char>> in(static_cast<std::size_t>(n), std::vector<unsigned char>(bytes));
  std::vector<std::vector<unsigned char>> out(static_cast<std::size_t>(n), std::vector<unsigned char>(bytes));
  std::vector<const void*> send;
  std::vector<void*> recv;
  for (int r = 0; r < n; ++r) {
    testing::fillPayload(o.dtype, o.op, o.seed, r, in[static_cast<std::size_t>(r)].data(), o.count);
    send.push_back(in[static_cast<std::size_t>(r)].data());
  }
  const testing::ReferenceResult ref = testing::referenceReduce(o.dtype, o.op, send, o.count);
  for (int r = 0; r < n; ++r)
    recv.push_back(o.in_place ? in[static_cast<std::size_t>(r)].data() : out[static_cast<std::size_t>(r)].data());
  for (int it = 0; it < o.iterations; ++it) {
    if (o.in_place) {  // every iteration reduces the same inputs
      for (int r = 0; r < n; ++r)
        testing::fillPayload(o.dtype, o.op, o.seed, r, in[static_cast<std::size_t>(r)].data(), o.count);
    }
    const std::vector<Status> statuses = cluster->allreduce(send, recv, o.count, o.dtype, o.op, setup.strategy);
    for (int r = 0; r < n; ++r) {
      if (!statuses[static_cast<std::size_t>(r)].isOk()) return statuses[static_cast<std::size_t>(r)];
    }
  }
  for (int r = 0; r < n && result.verdict == "ok"; ++r) {
    const std::string wrong =
        testing::compareToReference(o.dtype, o.op, ref, recv[static_cast<std::size_t>(r)], o.count);
    if (!wrong.empty()) result.verdict = "rank " + std::to_string(r) + " differs from the reference: " + wrong;
    if (result.verdict == "ok" && std::memcmp(recv[static_cast<std::size_t>(r)], recv[0], bytes) != 0) {
      result.verdict = "rank " + std::to_string(r) + "'s bits differ from rank 0's";
    }
  }
  const auto races = cluster->world().raceReports();
  if (result.verdict == "ok" && !races.empty()) result.verdict = "race: " + races.front();
  result.simulated_us = cluster->world().virtualTimeUs();
  return Status::ok();
}

// Reduce-scatter or all-gather: --count per rank; every rank's block (reduce-scatter) or every rank's
// whole buffer (all-gather, exactly: the same bits everywhere) against the reference, and the same bits
// on every iteration.
Status runCollective(const CliOptions& o, const Setup& setup, RunResult& result) {
  PR_ASSIGN_OR_RETURN(auto cluster, MultiMachineSimCluster::create(simOptionsOf(o, setup), setup.config));
  const int n = cluster->size();
  const auto world = static_cast<std::size_t>(n);
  // explainSelection agrees on the collective's table at its first call: every rank makes it at once.
  const std::vector<Status> explained = cluster->run([&](MultiMachineCommunicator& comm, int r) {
    auto selection = comm.explainSelection(o.collective, o.count, o.dtype);
    if (selection.isOk() && r == 0) result.selection = *selection;
    return selection.status();
  });
  for (const Status& s : explained) PR_RETURN_IF_ERROR(s);
  result.chosen = setup.strategy == MachineStrategy::kAuto ? result.selection.chosen : setup.strategy;
  const bool scatter = o.collective == Collective::kReduceScatter;
  const std::size_t elem = dataTypeSize(o.dtype);
  const std::size_t block = o.count * elem;
  const std::size_t in_count = scatter ? world * o.count : o.count;
  std::vector<std::vector<unsigned char>> inputs(world, std::vector<unsigned char>(in_count * elem));
  std::vector<std::vector<unsigned char>> large(world, std::vector<unsigned char>(world * block));
  std::vector<std::vector<unsigned char>> small(world, std::vector<unsigned char>(block));
  std::vector<const void*> reference_inputs;
  for (int r = 0; r < n; ++r) {
    testing::fillPayload(o.dtype, o.op, o.seed, r, inputs[static_cast<std::size_t>(r)].data(), in_count);
    reference_inputs.push_back(inputs[static_cast<std::size_t>(r)].data());
  }
  std::vector<std::vector<unsigned char>> first;
  for (int it = 0; it < o.iterations; ++it) {
    for (std::size_t i = 0; i < world; ++i) {  // every iteration starts from the same inputs
      if (scatter) std::copy(inputs[i].begin(), inputs[i].end(), large[i].begin());
      if (!scatter)
        std::copy(inputs[i].begin(), inputs[i].end(), o.in_place ? large[i].begin() + i * block : small[i].begin());
    }
    const std::vector<Status> statuses = cluster->run([&](MultiMachineCommunicator& comm, int r) {
      const auto i = static_cast<std::size_t>(r);
      unsigned char* own = large[i].data() + i * block;
      if (scatter) {
        return comm.reduceScatter(large[i].data(), o.in_place ? own : small[i].data(), o.count, o.dtype, o.op, nullptr,
                                  setup.strategy);
      }
      return comm.allGather(o.in_place ? own : small[i].data(), large[i].data(), o.count, o.dtype, nullptr,
                            setup.strategy);
    });
    for (const Status& s : statuses) PR_RETURN_IF_ERROR(s);
    std::vector<std::vector<unsigned char>> got;
    for (std::size_t i = 0; i < world; ++i) {
      const unsigned char* out = !scatter     ? large[i].data()
                                 : o.in_place ? large[i].data() + i * block
                                              : small[i].data();
      got.emplace_back(out, out + (scatter ? block : world * block));
    }
    if (it == 0) first = got;
    if (got != first && result.verdict == "ok") result.verdict = "iteration " + std::to_string(it) + " gave other bits";
  }
  const std::vector<std::uint8_t> gathered =
      scatter ? std::vector<std::uint8_t>{} : testing::referenceAllGather(o.dtype, reference_inputs, o.count);
  for (int r = 0; r < n && result.verdict == "ok"; ++r) {
    const void* got = first[static_cast<std::size_t>(r)].data();
    const std::string wrong =
        scatter ? testing::compareToReference(
                      o.dtype, o.op, testing::referenceReduceScatter(o.dtype, o.op, reference_inputs, o.count, r), got,
                      o.count)
                : testing::compareExactly(o.dtype, gathered, got);
    if (!wrong.empty()) result.verdict = "rank " + std::to_string(r) + " differs from the reference: " + wrong;
  }
  const auto races = cluster->world().raceReports();
  if (result.verdict == "ok" && !races.empty()) result.verdict = "race: " + races.front();
  result.simulated_us = cluster->world().virtualTimeUs();
  return Status::ok();
}

void printRun(const CliOptions& o, const Setup& setup, const RunResult& r) {
  const double predicted =
      (r.chosen == MachineStrategy::kFlat ? r.selection.flat_us : r.selection.hierarchical_us) * o.iterations;
  if (o.json) {
    std::printf(
        "{\"collective\":\"%s\",\"machines\":%d,\"ranks_per_machine\":%d,\"count\":%zu,\"dtype\":\"%s\",\"op\":\"%s\","
        "\"strategy\":\"%s\",\"forced\":%s,\"hierarchical_us\":%.4f,\"flat_us\":%.4f,\"predicted_time_us\":%.4f,"
        "\"simulated_time_us\":%.4f,\"verdict\":\"%s\"}\n",
        std::string(collectiveName(o.collective)).c_str(), o.machines, o.ranks_per_machine, o.count,
        std::string(dataTypeName(o.dtype)).c_str(), std::string(reduceOpName(o.op)).c_str(),
        machineStrategyName(r.chosen), setup.strategy == MachineStrategy::kAuto ? "false" : "true",
        r.selection.hierarchical_us, r.selection.flat_us, predicted, r.simulated_us,
        r.verdict == "ok" ? "ok" : "wrong");
    return;
  }
  std::printf("peerreduce-sim %s across %d machines x %d ranks (%d ranks): %zu x %s %s, seed %" PRIu64 "\n",
              std::string(collectiveName(o.collective)).c_str(), o.machines, o.ranks_per_machine,
              o.machines * o.ranks_per_machine, o.count, std::string(dataTypeName(o.dtype)).c_str(),
              std::string(reduceOpName(o.op)).c_str(), o.seed);
  std::printf("  network:     %.0f Gb/s per NIC, %.1f us one way (%s)\n", setup.network.bandwidth_gbps * 8.0,
              setup.network.latency_us, std::string(linkClassName(setup.network.link_class)).c_str());
  std::printf("  strategy:    %s (%s; predicted hierarchical %.2f us, flat %.2f us)\n", machineStrategyName(r.chosen),
              setup.strategy == MachineStrategy::kAuto ? "cost model" : "forced by --strategy",
              r.selection.hierarchical_us, r.selection.flat_us);
  std::printf("  plans:       %s\n", phases(o.collective, r.selection, r.chosen).c_str());
  std::printf("  time:        predicted %.2f us by the cost model; simulated %.2f us of virtual time\n", predicted,
              r.simulated_us);
  const char* ok = o.collective == Collective::kReduceScatter
                       ? "ok (every rank's block matches the reference, the same bits on every iteration, no race)"
                       : "ok (every rank matches the reference with identical bits, no race)";
  std::printf("  verdict:     %s\n", r.verdict == "ok" ? ok : r.verdict.c_str());
}

}  // namespace

int multiMachineMain(const CliOptions& o) {
  auto setup = setupOf(o);
  Status status = setup.status();
  RunResult result;
  if (status.isOk()) {
    status = o.command == CliCommand::kPredict        ? predict(o, *setup)
             : o.collective == Collective::kAllReduce ? runAllreduce(o, *setup, result)
                                                      : runCollective(o, *setup, result);
  }
  if (!status.isOk()) {
    if (o.json) std::printf("{\"verdict\":\"%s\"}\n", errorCodeName(status.code()).data());
    std::fprintf(stderr, "peerreduce-sim: %s\n", status.toString().c_str());
    return status.code() == ErrorCode::kInvalidArgument ? kExitBadInput : kExitWrong;
  }
  if (o.command == CliCommand::kPredict) return kExitOk;
  printRun(o, *setup, result);
  return result.verdict == "ok" ? kExitOk : kExitWrong;
}

}  // namespace peerreduce::sim
