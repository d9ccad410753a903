#include "cli/cli_options.h"

#include <limits>

#include "algorithms/algorithms.h"
#include "algorithms/collective_routes.h"
#include "topology/device_profiles.h"
#include "topology/machines.h"

namespace peerreduce::sim {
namespace {

StatusOr<std::uint64_t> parseUnsigned(const std::string& flag, const std::string& text, std::uint64_t low,
                                      std::uint64_t high) {
  if (text.empty()) return invalidArgumentError(flag + " needs a number");
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return invalidArgumentError(flag + " " + text + ": not a whole number");
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
      return invalidArgumentError(flag + " " + text + ": too large");
    }
    value = value * 10 + digit;
  }
  if (value < low || value > high) {
    return invalidArgumentError(flag + " " + text + ": must be in " + std::to_string(low) + ".." +
                                std::to_string(high));
  }
  return value;
}

}  // namespace

std::string cliUsage() {
  return "usage: peerreduce-sim [allreduce] [options]\n"
         "       peerreduce-sim reduce-scatter | all-gather | broadcast [options] [--root R]\n"
         "       peerreduce-sim predict --ranks N [--collective C [--root R]] [--topology T | --device D] [--mask M]\n"
         "                              [--dtype T] [--json]\n"
         "       peerreduce-sim campaign [--seeds N] [--seed S] [--json] (fault scenarios; see campaign --help)\n"
         "       peerreduce-sim settings [--json | --markdown] (every PEERREDUCE_* setting)\n"
         "       peerreduce-sim plan check | run | show ... (plan files, docs/PLANS.md; see plan --help)\n"
         "Runs an allreduce (or reduce-scatter, all-gather, broadcast) on simulated GPUs, checks it against an\n"
         "independent reference, and says what ran.\n"
         "predict prints the cost model's time for every algorithm at 4 KiB .. 256 MiB per rank's block and the\n"
         "selector's pick.\n"
         "  --ranks N          simulated GPUs, 1..64 (default 8)\n"
         "  --count N          elements per rank (reduce-scatter: received, all-gather: sent; default 1048576)\n"
         "  --dtype T          int8 uint8 int32 uint32 int64 uint64 fp16 bf16 fp32 fp64 fp8e4m3 fp8e5m2\n"
         "                     (default bf16)\n"
         "  --op OP            sum prod min max avg (default sum; allreduce and reduce-scatter)\n"
         "  --root R           broadcast's root rank (default 0)\n"
         "  --collective C     predict: allreduce (default) reduce-scatter all-gather broadcast\n"
         "  --algo A           auto one-shot two-shot ring recursive-doubling rabenseifner tree copy-engine-two-shot\n"
         "                     (default auto); reduce-scatter, all-gather: one-shot ring recursive-doubling tree\n"
         "                     copy-engine-two-shot; broadcast: one-shot two-shot ring tree copy-engine-two-shot\n"
         "  --seed S           scheduler and payload seed (default 1)\n"
         "  --iterations K     allreduces back to back, 1..1000 (default 1)\n"
         "  --in-place         send buffer = receive buffer (reduce-scatter: the output is the input's block of\n"
         "                     this rank; all-gather: the input is the output's block of this rank)\n"
         "  --no-race-check    skip the happens-before checker (faster)\n"
         "  --trace FILE       write a Chrome trace (open in ui.perfetto.dev)\n"
         "  --topology T       full-mesh (default), ring, mesh2d:RxC, pcie:K, random:DENSITY[:SEED], or a topology "
         "file\n"
         "  --device D         price the full mesh with a calibrated profile: h200 (fitted on 4 x H200)\n"
         "  --mask PAIRS       forbid direct links (0-1,2-3) or stage pairs through host memory\n"
         "                     (host:0-1, host:all), as PEERREDUCE_LINK_MASK\n"
         "  --json             print one JSON object instead of text (predict: every size's candidates)\n"
         "  --machines M       allreduce, reduce-scatter, all-gather and predict across M simulated machines\n"
         "  --ranks-per-machine K  ranks of each machine, 1..64 (M x K at most 64 to run; predict: any)\n"
         "  --network GBIT[:US]    each NIC's rate in Gb/s and one-way latency in us (default 400:5)\n"
         "  --strategy S       across machines: auto (default), hierarchical, flat\n"
         "  --help             this text\n"
         "Exit status: 0 verified, 1 the result or the run was wrong, 2 bad input.\n";
}

StatusOr<CliOptions> parseCliOptions(const std::vector<std::string>& args) {
  CliOptions options;
  std::size_t i = 0;
  if (args.empty()) {
    options.defaulted = true;
    return options;
  }
  if (args[0] == "allreduce") {
    ++i;
  } else if (args[0] == "reduce-scatter" || args[0] == "all-gather" || args[0] == "broadcast") {
    PR_ASSIGN_OR_RETURN(options.collective, parseCollective(args[0]));
    ++i;
  } else if (args[0] == "predict") {
    options.command = CliCommand::kPredict;
    ++i;
  } else if (args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    options.command = CliCommand::kHelp;
    return options;
  } else if (args[0].rfind("--", 0) != 0) {
    return invalidArgumentError(
        "unknown command '" + args[0] +
        "'; the commands are 'allreduce' (the default), 'reduce-scatter', 'all-gather', 'broadcast', 'predict', "
        "'campaign', 'settings', 'plan' and 'help'");
  }
  auto value = [&](const std::string& flag) -> StatusOr<std::string> {
    if (i + 1 >= args.size()) return invalidArgumentError(flag + " needs a value");
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help" || flag == "-h") {
      options.command = CliCommand::kHelp;
    } else if (flag == "--ranks") {
      PR_ASSIGN_OR_RETURN(std::string v, value(flag));
      PR_ASSIGN_OR_RETURN(std::uint64_t n, parseUnsigned(flag, v, 1, 64));
      options.ranks = static_cast<int>(n);
    } else if (flag == "--count") {
      PR_ASSIGN_OR_RETURN(std::string v, value(flag));
      PR_ASSIGN_OR_RETURN(std::uint64_t n, parseUnsigned(flag, v, 0, kMaxCliCount));
      options.count = static_cast<std::size_t>(n);
    } else if (flag == "--dtype") {
      PR_ASSIGN_OR_RETURN(std::string v, value(flag));
      PR_ASSIGN_OR_RETURN(options.dtype, parseDataType(v));
    } else if (flag == "--op") {
      PR_ASSIGN_OR_RETURN(std::string v, value(flag));
      PR_ASSIGN_OR_RETURN(options.op, parseReduceOp(v));
      options.op_given = true;
    } else if (flag == "--root") {
      PR_ASSIGN_OR_RETURN(std::string v, value(flag));
      PR_ASSIGN_OR_RETURN(std::uint64_t r, parseUnsigned(flag, v, 0, 63));
      options.root = static_cast<int>(r);
    } else if (flag == "--collective") {
      if (options.command != CliCommand::kPredict) {
        return invalidArgumentError(
            "--collective is predict's; to run one, name it as the command (e.g. "
            "peerreduce-sim reduce-scatter)");
      }
      PR_ASSIGN_OR_RETURN(std::string v, value(flag));
      PR_ASSIGN_OR_RETURN(options.collective, parseCollective(v));
    } else if (flag == "--algo") {
      PR_ASSIGN_OR_RETURN(std::string v, value(flag));
      PR_ASSIGN_OR_RETURN(options.algorithm, parseAlgorithm(v));
      if (options.algorithm == Algorithm::kUser) {
        return invalidArgumentError(
            "--algo user: a plan file runs with 'peerreduce-sim plan run FILE' (docs/PLANS.md)");
      }
    } else if (flag == "--seed") {
      PR_ASSIGN_OR_RETURN(std::string v, value(flag));
      PR_ASSIGN_OR_RETURN(options.seed, parseUnsigned(flag, v, 0, std::numeric_limits<std::uint64_t>::max()));
    } else if (flag == "--iterations") {
      PR_ASSIGN_OR_RETURN(std::string v, value(flag));
      PR_ASSIGN_OR_RETURN(std::uint64_t n, parseUnsigned(flag, v, 1, kMaxCliIterations));
      options.iterations = static_cast<int>(n);
    } else if (flag == "--trace") {
      PR_ASSIGN_OR_RETURN(options.trace_path, value(flag));
      if (options.trace_path.empty()) return invalidArgumentError("--trace needs a file name");
    } else if (flag == "--topology") {
      PR_ASSIGN_OR_RETURN(options.topology, value(flag));
      if (options.topology.empty()) return invalidArgumentError("--topology needs a name or a file");
    } else if (flag == "--device") {
      PR_ASSIGN_OR_RETURN(options.device, value(flag));
      if (findDeviceProfile(options.device) == nullptr) {
        std::string known;
        for (const DeviceProfile& p : deviceProfiles()) known += (known.empty() ? "" : ", ") + std::string(p.name);
        return invalidArgumentError("--device '" + options.device.substr(0, 32) + "' has no calibrated profile (" +
                                    known + ")");
      }
    } else if (flag == "--machines" || flag == "--ranks-per-machine") {
      PR_ASSIGN_OR_RETURN(std::string v, value(flag));
      PR_ASSIGN_OR_RETURN(std::uint64_t n, parseUnsigned(flag, v, 1, 64));
      (flag == "--machines" ? options.machines : options.ranks_per_machine) = static_cast<int>(n);
    } else if (flag == "--network") {
      PR_ASSIGN_OR_RETURN(options.network, value(flag));
      PR_RETURN_IF_ERROR(parseNetworkSpec(options.network).status());
    } else if (flag == "--strategy") {
      PR_ASSIGN_OR_RETURN(options.strategy, value(flag));
      if (options.strategy != "auto" && options.strategy != "hierarchical" && options.strategy != "flat") {
        return invalidArgumentError("--strategy '" + options.strategy.substr(0, 32) + "': auto, hierarchical or flat");
      }
    } else if (flag == "--mask") {
      PR_ASSIGN_OR_RETURN(options.mask, value(flag));
    } else if (flag == "--in-place") {
      options.in_place = true;
    } else if (flag == "--no-race-check") {
      options.race_checking = false;
    } else if (flag == "--json") {
      options.json = true;
    } else {
      return invalidArgumentError("unknown option '" + flag + "'; see --help");
    }
  }
  const std::string name(collectiveName(options.collective));
  if ((options.machines > 0) != (options.ranks_per_machine > 0) ||
      (options.machines == 0 && (!options.network.empty() || !options.strategy.empty()))) {
    return invalidArgumentError("--machines and --ranks-per-machine go together (and --network, --strategy need them)");
  }
  if (options.machines > 0 && options.collective == Collective::kBroadcast) {
    return invalidArgumentError("--machines: " + name +
                                " across machines is not available here; allreduce, reduce-scatter and all-gather are");
  }
  if (options.root != 0 && options.collective != Collective::kBroadcast) {
    return invalidArgumentError("--root is broadcast's; " + name + " has no root");
  }
  if (options.root >= options.ranks) {
    return invalidArgumentError("--root " + std::to_string(options.root) + " is not a rank of " +
                                std::to_string(options.ranks) + " (0.." + std::to_string(options.ranks - 1) + ")");
  }
  if (options.collective != Collective::kAllReduce && options.algorithm != Algorithm::kAuto &&
      !collectiveHasAlgorithm(options.collective, options.algorithm)) {
    return invalidArgumentError("--algo " + std::string(algorithmName(options.algorithm)) + ": " + name + " runs " +
                                std::string(collectiveAlgorithmList(options.collective)) + " (or auto)");
  }
  if (options.op_given &&
      (options.collective == Collective::kAllGather || options.collective == Collective::kBroadcast)) {
    return invalidArgumentError("--op: " + name + " reduces nothing; --op is for allreduce and reduce-scatter");
  }
  // A profile was fitted on a full mesh; on another topology, or beside a file's own figures, its
  // numbers would price links it never measured.
  if (!options.device.empty() && !options.topology.empty() && options.topology != "full-mesh") {
    return invalidArgumentError("--device " + options.device +
                                " prices the full mesh it was measured on; it cannot be "
                                "combined with --topology " +
                                options.topology);
  }
  return options;
}

std::string cliCommandLine(const CliOptions& o) {
  const bool reduces = o.collective == Collective::kAllReduce || o.collective == Collective::kReduceScatter;
  std::string line = "peerreduce-sim " + std::string(collectiveName(o.collective)) + " --ranks " +
                     std::to_string(o.ranks) + " --count " + std::to_string(o.count) + " --dtype " +
                     std::string(dataTypeName(o.dtype)) +
                     (reduces ? " --op " + std::string(reduceOpName(o.op)) : std::string()) + " --algo " +
                     std::string(algorithmName(o.algorithm)) + " --seed " + std::to_string(o.seed);
  if (o.collective == Collective::kBroadcast) line += " --root " + std::to_string(o.root);
  if (o.iterations != 1) line += " --iterations " + std::to_string(o.iterations);
  if (o.in_place) line += " --in-place";
  if (!o.race_checking) line += " --no-race-check";
  if (!o.topology.empty()) line += " --topology " + o.topology;
  if (!o.device.empty()) line += " --device " + o.device;
  if (!o.mask.empty()) line += " --mask " + o.mask;
  if (o.machines > 0) {
    line += " --machines " + std::to_string(o.machines) + " --ranks-per-machine " + std::to_string(o.ranks_per_machine);
  }
  if (!o.network.empty()) line += " --network " + o.network;
  if (!o.strategy.empty()) line += " --strategy " + o.strategy;
  if (!o.plan_file.empty()) {
    // The file says the collective, the world and the root: `plan run` takes the rest of the line.
    const std::string prefix =
        "peerreduce-sim " + std::string(collectiveName(o.collective)) + " --ranks " + std::to_string(o.ranks) + " ";
    line.replace(0, prefix.size(), "peerreduce-sim plan run " + o.plan_file + " ");
    for (const std::string& drop : {std::string(" --algo auto"), " --root " + std::to_string(o.root)}) {
      if (const auto at = line.find(drop); at != std::string::npos) line.erase(at, drop.size());
    }
  }
  return line;
}

}  // namespace peerreduce::sim
