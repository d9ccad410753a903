#include "cli/plan_command.h"

#include <cstdio>
#include <string>

#include "algorithms/algorithms.h"
#include "api/user_plan.h"
#include "cli/cli_options.h"
#include "cli/cli_run.h"
#include "plan/plan_text.h"

namespace peerreduce::sim {
namespace {

constexpr const char* kPlanUsage =
    "usage: peerreduce-sim plan check FILE [--topology T | --device D] [--mask M]\n"
    "       peerreduce-sim plan run FILE [--topology T | --device D] [--mask M] [--count N] [--dtype T] [--op OP]\n"
    "                               [--seed S] [--iterations K] [--in-place] [--no-race-check] [--trace F] [--json]\n"
    "       peerreduce-sim plan show --algo A --ranks N [--collective C] [--root R] [--in-place]\n"
    "Plan files (docs/PLANS.md) before they reach a GPU. The file says the collective, the world and the root.\n"
    "  check  the verifier's verdict over the topology's links (default: a full mesh), alone and twice in a\n"
    "         row; every problem names the lines of the steps it involves\n"
    "  run    the plan on the simulator at every size: race checker, every rank's result against the\n"
    "         reference bit for bit, then the predicted time of it and of every built-in algorithm of its\n"
    "         collective at 4 KiB .. 256 MiB (predict's table)\n"
    "  show   a built-in plan (full mesh) written in the format, to start one's own from\n"
    "Exit status: 0 verified (and run), 1 refused or wrong, 2 bad input.\n";

// Options the file decides, or that make no sense for a given plan: refused rather than ignored.
constexpr const char* kFileDecides[] = {
    "--ranks", "--root", "--collective", "--algo", "--machines", "--ranks-per-machine", "--network", "--strategy"};

int badInput(const Status& status) {
  std::fprintf(stderr, "peerreduce-sim plan: %s\n", status.toString().c_str());
  return kExitBadInput;
}

// The options of a run of the file's collective on its world, with the user's options after them.
StatusOr<CliOptions> optionsFor(const Plan& plan, const std::string& path, const std::vector<std::string>& rest) {
  std::vector<std::string> args = {std::string(collectiveName(plan.collective)), "--ranks",
                                   std::to_string(plan.world_size)};
  if (plan.collective == Collective::kBroadcast) args.insert(args.end(), {"--root", std::to_string(plan.root)});
  for (const std::string& arg : rest) {
    for (const char* decided : kFileDecides) {
      if (arg == decided) {
        return invalidArgumentError(arg + ": the plan file '" + path +
                                    "' says its collective, world and root, and runs itself");
      }
    }
    args.push_back(arg);
  }
  PR_ASSIGN_OR_RETURN(CliOptions options, parseCliOptions(args));
  options.plan_file = path;
  return options;
}

std::string summary(const Plan& plan, const std::string& path) {
  std::string out = "plan " + path + ": " + std::string(collectiveName(plan.collective));
  if (plan.collective == Collective::kBroadcast) out += " from root " + std::to_string(plan.root);
  std::size_t steps = 0;
  for (const RankProgram& program : plan.programs) steps += program.steps.size();
  return out + " over " + std::to_string(plan.world_size) + " ranks; chunks per block " +
         std::to_string(plan.num_chunks) + ", scratch slots " + std::to_string(plan.scratch_slots) + ", flags " +
         std::to_string(plan.num_flags) + ", steps " + std::to_string(steps) + "; written " +
         (plan.in_place ? "in place" : "out of place") +
         (plan.description.empty() ? "" : " (" + plan.description + ")");
}

int check(const PlanText& text, const std::string& path, const std::vector<std::string>& rest) {
  for (const std::string& arg : rest) {
    if (arg.rfind("--", 0) == 0 && arg != "--topology" && arg != "--device" && arg != "--mask") {
      return badInput(invalidArgumentError(arg + ": plan check takes --topology, --device and --mask only"));
    }
  }
  auto options = optionsFor(text.plan, path, rest);
  if (!options.isOk()) return badInput(options.status());
  auto topology = simulatedTopology(*options);
  if (!topology.isOk()) return badInput(topology.status());
  std::printf("%s\n", summary(text.plan, path).c_str());
  std::printf("  topology:  %s\n", topology->describe().c_str());
  const VerifyReport report = checkPlan(text, *topology);
  if (!report.ok()) {
    const bool cut = static_cast<int>(report.problems.size()) >= VerifyOptions{}.max_problems;
    std::printf("  verdict:   REFUSED, %s%zu problem%s (each step with its line in brackets):\n",
                cut ? "the first " : "", report.problems.size(), report.problems.size() == 1 ? "" : "s");
    for (const std::string& p : report.problems) std::printf("    %s\n", p.c_str());
    return kExitWrong;
  }
  std::printf(
      "  verdict:   verified: alone and twice in a row, every wait is reached, every access to memory another\n"
      "             step writes is ordered by signals, only linked peers are touched, and every output chunk\n"
      "             holds %s\n",
      text.plan.collective == Collective::kAllReduce || text.plan.collective == Collective::kReduceScatter
          ? "every rank's input exactly once, in one fold order on every rank"
          : "an exact copy of the input it must hold");
  PlanText other = text;
  other.plan.in_place = !text.plan.in_place;
  const VerifyReport flipped = checkPlan(other, *topology);
  std::printf("  %s: %s\n", text.plan.in_place ? "out of place" : "in place",
              flipped.ok()
                  ? "the same steps verify too (a communicator runs them for both placements)"
                  : ("not offered (those calls run the built-in choice): " + flipped.problems.front()).c_str());
  return kExitOk;
}

int run(const PlanText& text, const std::string& path, const std::vector<std::string>& rest) {
  auto options = optionsFor(text.plan, path, rest);
  if (!options.isOk()) return badInput(options.status());
  const int status = runAndReport(*options);
  if (status == kExitBadInput || options->json) return status;
  CliOptions predict = *options;
  predict.command = CliCommand::kPredict;
  std::printf("\n");
  const Status table = runPredict(predict);
  if (!table.isOk()) {
    std::fprintf(stderr, "peerreduce-sim plan: %s\n", table.toString().c_str());
    return kExitWrong;
  }
  return status;
}

int show(const std::vector<std::string>& rest) {
  std::vector<std::string> args = {"predict"};
  args.insert(args.end(), rest.begin(), rest.end());
  auto options = parseCliOptions(args);
  if (!options.isOk()) return badInput(options.status());
  if (options->algorithm == Algorithm::kAuto) return badInput(invalidArgumentError("plan show needs --algo"));
  PlanRequest request{options->algorithm, options->ranks, options->in_place};
  request.collective = options->collective;
  request.root = options->root;
  auto plan = buildPlan(request);
  if (!plan.isOk()) return badInput(plan.status());
  std::printf("%s", formatPlanText(*plan).c_str());
  return kExitOk;
}

}  // namespace

int planMain(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::printf("%s", kPlanUsage);
    return args.empty() ? kExitBadInput : kExitOk;
  }
  const std::string& command = args[0];
  if (command == "show") return show(std::vector<std::string>(args.begin() + 1, args.end()));
  if (command != "check" && command != "run") {
    std::fprintf(stderr, "peerreduce-sim plan: unknown command '%s'\n%s", command.substr(0, 32).c_str(), kPlanUsage);
    return kExitBadInput;
  }
  if (args.size() < 2 || args[1].rfind("--", 0) == 0) {
    std::fprintf(stderr, "peerreduce-sim plan %s: name the plan file\n%s", command.c_str(), kPlanUsage);
    return kExitBadInput;
  }
  const std::string& path = args[1];
  auto text = loadPlanText(path);
  if (!text.isOk()) return badInput(text.status());
  const std::vector<std::string> rest(args.begin() + 2, args.end());
  return command == "check" ? check(*text, path, rest) : run(*text, path, rest);
}

}  // namespace peerreduce::sim
