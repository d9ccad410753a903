#include "bench_options.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <string_view>

#include "collective_units.h"
#include "core/collective_algorithms.h"
#include "peerreduce/communicator.h"  // kMaxBatchItems

namespace peerreduce::bench {
namespace {

Status badValue(const std::string& flag, const std::string& value, const std::string& takes) {
  return invalidArgumentError(flag + " '" + value + "': " + takes);
}

StatusOr<std::size_t> parseBytes(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  double scale = 1;
  if (end && (*end == 'K' || *end == 'k')) scale = 1024;
  if (end && (*end == 'M' || *end == 'm')) scale = 1024.0 * 1024;
  if (end && (*end == 'G' || *end == 'g')) scale = 1024.0 * 1024 * 1024;
  if (!(v > 0) || v * scale > 1e15) return badValue(flag, text, "takes a size such as 4096, 64K, 256M or 1G");
  return static_cast<std::size_t>(v * scale);
}

StatusOr<int> parseInt(const std::string& flag, const std::string& text, int low, int high) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end == nullptr || *end != '\0' || v < low || v > high) {
    return badValue(flag, text, "takes a whole number in " + std::to_string(low) + ".." + std::to_string(high));
  }
  return static_cast<int>(v);
}

constexpr std::string_view kValueFlags[] = {
    "--coll", "--root",      "--min-bytes", "--max-bytes",       "--step-factor", "--dtype",
    "--algo", "--iters",     "--repeats",   "--warmup",          "--nccl",        "--json",
    "--csv",  "--link-mask", "--batch",     "--batch-max-bytes", "--skew-us",     "--machines"};

}  // namespace

StatusOr<Options> parseOptions(int argc, const char* const* argv, int ranks) {
  Options o;
  std::string algo = "auto";
  bool root_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool is_switch =
        a == "--nccl-p2p-disable" || a == "--no-in-place" || a == "--profile" || a == "--ce" || a == "--eager";
    const bool takes_value = std::find(std::begin(kValueFlags), std::end(kValueFlags), a) != std::end(kValueFlags);
    if (!is_switch && !takes_value) return invalidArgumentError("unknown option " + a);
    if (takes_value && i + 1 >= argc) return invalidArgumentError(a + " needs a value");
    const std::string v = takes_value ? argv[++i] : "";
    if (a == "--coll") {
      PR_ASSIGN_OR_RETURN(o.collective, parseCollective(v));
    } else if (a == "--root") {
      PR_ASSIGN_OR_RETURN(o.root, parseInt(a, v, 0, std::max(0, ranks - 1)));
      root_given = true;
    } else if (a == "--min-bytes") {
      PR_ASSIGN_OR_RETURN(o.min_bytes, parseBytes(a, v));
    } else if (a == "--max-bytes") {
      PR_ASSIGN_OR_RETURN(o.max_bytes, parseBytes(a, v));
    } else if (a == "--step-factor") {
      PR_ASSIGN_OR_RETURN(o.step_factor, parseInt(a, v, 2, 1024));
    } else if (a == "--dtype") {
      PR_ASSIGN_OR_RETURN(o.dtype, parseDataType(v));
      if (!benchmarkedType(o.dtype)) return badValue(a, v, "takes fp32, fp16, bf16, fp8e4m3 or fp8e5m2");
    } else if (a == "--algo") {
      algo = v;
      o.algorithm_given = true;
    } else if (a == "--iters") {
      PR_ASSIGN_OR_RETURN(o.iters, parseInt(a, v, 1, 1 << 20));
    } else if (a == "--repeats") {
      PR_ASSIGN_OR_RETURN(o.repeats, parseInt(a, v, 1, 1 << 20));
    } else if (a == "--warmup") {
      PR_ASSIGN_OR_RETURN(o.warmup, parseInt(a, v, 0, 1 << 20));
    } else if (a == "--nccl") {
      o.nccl_path = v;
    } else if (a == "--json") {
      o.json_path = v;
    } else if (a == "--csv") {
      o.csv_path = v;
    } else if (a == "--link-mask") {
      o.link_mask = v;
    } else if (a == "--nccl-p2p-disable") {
      o.nccl_p2p_disable = true;
    } else if (a == "--no-in-place") {
      o.in_place = false;
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--ce") {
      o.ce_probe = true;
    } else if (a == "--eager") {
      o.eager = true;
    } else if (a == "--batch") {
      PR_ASSIGN_OR_RETURN(o.batch, parseInt(a, v, 1, static_cast<int>(kMaxBatchItems)));
    } else if (a == "--skew-us") {
      PR_ASSIGN_OR_RETURN(o.skew_us, parseInt(a, v, 0, 1000000));
    } else if (a == "--machines") {
      PR_ASSIGN_OR_RETURN(o.machines, parseInt(a, v, 2, std::max(2, ranks)));
    } else if (a == "--batch-max-bytes") {
      PR_ASSIGN_OR_RETURN(o.batch_max_bytes, parseBytes(a, v));
    }
  }
  const std::string coll(collectiveName(o.collective));
  if (o.min_bytes > o.max_bytes) return invalidArgumentError("--min-bytes is above --max-bytes");
  if (root_given && o.collective != Collective::kBroadcast) {
    return invalidArgumentError("--root applies to --coll broadcast only, not " + coll);
  }
  if (o.batch > 0 && o.collective != Collective::kAllReduce) {
    return invalidArgumentError("--batch measures allreduceBatch: it needs --coll allreduce, not " + coll);
  }
  if (o.machines > 0) {
    if (ranks % o.machines != 0) {
      return invalidArgumentError("--machines " + std::to_string(o.machines) + ": " + std::to_string(ranks) +
                                  " ranks do not split into machines of equal rank counts");
    }
    if (!o.eager) {
      return invalidArgumentError(
          "--machines needs --eager: the step between machines runs on the host, which a graph cannot capture");
    }
    if (o.batch > 0 || o.algorithm_given || o.link_mask || o.profile) {
      return invalidArgumentError(
          "--machines times each machine strategy; --batch, --algo, --link-mask and --profile do not apply");
    }
  }
  o.algorithms.clear();
  if (algo == "all") {
    for (int k = 1; k < kBuiltAlgorithmCount; ++k) {
      if (anyCollectiveHasAlgorithm(o.collective, static_cast<Algorithm>(k)))
        o.algorithms.push_back(static_cast<Algorithm>(k));
    }
  } else {
    PR_ASSIGN_OR_RETURN(const Algorithm one, parseAlgorithm(algo));
    if (one == Algorithm::kUser) {
      // A plan file is not forced like an algorithm: it runs for the sizes its settings give.
      return badValue("--algo", algo,
                      "a plan file runs through PEERREDUCE_PLAN_FILE and its size range (docs/PLANS.md)");
    }
    if (one != Algorithm::kAuto && !anyCollectiveHasAlgorithm(o.collective, one)) {
      return badValue("--algo", algo, coll + " has no such algorithm");
    }
    o.algorithms.push_back(one);
  }
  return o;
}

}  // namespace peerreduce::bench
