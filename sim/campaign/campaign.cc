#include "campaign.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

#include "campaign_workers.h"
#include "json_text.h"
#include "multi_machine_campaign.h"
#include "peerreduce/status.h"
#include "prng.h"
#include "util/log.h"
#include "util/parse.h"

namespace peerreduce::sim::campaign {
namespace {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

}  // namespace

bool campaignPassed(const CampaignReport& r) {
  return r.safety_failures + r.liveness_failures == 0 && r.worker_error.empty();
}

std::string replayCommand(std::uint64_t seed, bool canary) {
  return "peerreduce-sim campaign --seeds 1 --seed " + std::to_string(seed) +
         (canary ? " --canary swallow-errors" : "");
}

namespace {

// Adds scenario `r` of `seed` to the report. Called in seed order, so the report (and its
// fingerprint) is the same whatever the number of jobs.
void accumulate(CampaignReport& report, const Scenario& scenario, const ScenarioResult& r, std::uint64_t seed) {
  report.scenarios += 1;
  report.ops_ok += static_cast<std::uint64_t>(r.ops_ok);
  report.ops_failed += static_cast<std::uint64_t>(r.ops_failed);
  report.creation_refusals += static_cast<std::uint64_t>(r.creation_refusals);
  report.shrinks += static_cast<std::uint64_t>(r.shrinks);
  report.buggify_fired += r.buggify_fired;
  for (int k = 0; k < faults::kFaultKindCount; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    if (scenario.mix.has(static_cast<faults::FaultKind>(k))) report.mixes_with[kk] += 1;
    report.kinds[kk].injected += r.kinds[kk].injected;
    report.kinds[kk].ops_failed += r.kinds[kk].ops_failed;
    report.kinds[kk].recoveries += r.kinds[kk].recoveries;
    report.kinds[kk].recovery_us += r.kinds[kk].recovery_us;
    report.kinds[kk].max_recovery_us = std::max(report.kinds[kk].max_recovery_us, r.kinds[kk].max_recovery_us);
  }
  for (std::size_t c = 0; c < r.error_codes.size(); ++c)
    report.error_codes[c] += static_cast<std::uint64_t>(r.error_codes[c]);
  report.fingerprint = deriveSeed(report.fingerprint ^ r.fingerprint, seed);
  if (!r.safety_ok) report.safety_failures += 1;
  if (!r.liveness_ok) report.liveness_failures += 1;
  if ((!r.safety_ok || !r.liveness_ok) && report.failures.size() < kMaxListedFailures) {
    report.failures.push_back(
        {seed, r.problem, scenario.describe(), replayCommand(seed, report.options.swallow_errors_canary)});
  }
}

// Scenarios run in batches, whose results are accumulated in seed order before the next batch starts
// (memory stays bounded). With jobs > 1 each batch runs in worker processes (campaign_workers.h).
constexpr std::uint64_t kBatchSeeds = 512;
// A batch takes seconds; a worker still running after this is stuck.
constexpr double kBatchDeadlineSeconds = 900.0;

}  // namespace

CampaignReport runCampaign(const CampaignOptions& options) {
  CampaignReport report;
  report.options = options;
  const auto begin = std::chrono::steady_clock::now();
  // Thousands of provoked failures would each log a warning; the summary reports them instead.
  setLogMuted(true);
  ScenarioOptions scenario_options;
  scenario_options.swallow_errors_canary = options.swallow_errors_canary;
  const int jobs = std::clamp(options.jobs, 1, kMaxCampaignJobs);
  for (std::uint64_t first = 0; first < options.seeds && report.worker_error.empty(); first += kBatchSeeds) {
    const std::uint64_t batch = std::min(kBatchSeeds, options.seeds - first);
    const std::uint64_t batch_seed = options.first_seed + first;
    std::vector<ScenarioResult> results;
    if (jobs == 1) {
      for (std::uint64_t i = 0; i < batch; ++i)
        results.push_back(runScenario(drawScenario(batch_seed + i), scenario_options));
    } else {
      auto ran = runScenariosInWorkers(batch_seed, batch, jobs, scenario_options, kBatchDeadlineSeconds);
      if (!ran.isOk()) {
        report.worker_error = ran.status().message();
        break;
      }
      results = std::move(ran).value();
    }
    for (std::uint64_t i = 0; i < batch; ++i)
      accumulate(report, drawScenario(batch_seed + i), results[i], batch_seed + i);
  }
  setLogMuted(false);
  report.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return report;
}

std::string formatText(const CampaignReport& r) {
  std::string out = "fault campaign: " + std::to_string(r.scenarios) + " seeds from " +
                    std::to_string(r.options.first_seed) +
                    (r.options.swallow_errors_canary ? " (canary: swallow-errors)" : "") + "\n";
  if (r.options.seeds == 1) out += "scenario: " + drawScenario(r.options.first_seed).describe() + "\n";
  out +=
      "fault mix: each kind is in a seed's mix with probability 1/2 (swarm testing). Per kind: the seeds whose "
      "mix had it (in mix), the faults injected, the operations lost and recovered, the recovery times.\n";
  char line[256];
  std::snprintf(line, sizeof(line), "%-26s %8s %9s %10s %10s %14s %14s\n", "fault kind", "in mix", "injected",
                "ops lost", "recovered", "mean recov us", "max recov us");
  out += line;
  for (int k = 0; k < faults::kFaultKindCount; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    const KindOutcome& ko = r.kinds[kk];
    const double mean = ko.recoveries > 0 ? ko.recovery_us / ko.recoveries : 0.0;
    std::snprintf(line, sizeof(line), "%-26s %8llu %9d %10d %10d %14s %14s\n",
                  std::string(faults::faultKindName(static_cast<faults::FaultKind>(k))).c_str(),
                  static_cast<unsigned long long>(r.mixes_with[kk]), ko.injected, ko.ops_failed, ko.recoveries,
                  fixed(mean, 1).c_str(), fixed(ko.max_recovery_us, 1).c_str());
    out += line;
  }
  out += "operations: " + std::to_string(r.ops_ok) + " ok, " + std::to_string(r.ops_failed) +
         " failed with a typed error; creation refusals " + std::to_string(r.creation_refusals) + "; shrinks " +
         std::to_string(r.shrinks) + "; BUGGIFY sites fired " + std::to_string(r.buggify_fired) + "\n";
  out += "errors by code:";
  for (std::size_t c = 1; c < r.error_codes.size(); ++c) {
    if (r.error_codes[c] == 0) continue;
    out += " " + std::string(errorCodeName(static_cast<ErrorCode>(c))) + "=" + std::to_string(r.error_codes[c]);
  }
  out += "\n";
  for (const auto& f : r.failures) {
    out += "FAILED seed " + std::to_string(f.seed) + ": " + f.problem + "\n  " + f.scenario +
           "\n  replay: " + f.replay + "\n";
  }
  out += "safety failures: " + std::to_string(r.safety_failures) +
         ", liveness failures: " + std::to_string(r.liveness_failures) + "\n";
  char fp[32];
  std::snprintf(fp, sizeof(fp), "%016llx", static_cast<unsigned long long>(r.fingerprint));
  out += "fingerprint: " + std::string(fp) + "\nwall time: " + fixed(r.wall_seconds, 2) + " s with " +
         std::to_string(std::clamp(r.options.jobs, 1, kMaxCampaignJobs)) + " jobs\n";
  if (!r.worker_error.empty()) out += "FAILED: " + r.worker_error + "\n";
  out += std::string("verdict: ") + (campaignPassed(r) ? "ok" : "FAILED") + "\n";
  return out;
}

std::string formatJson(const CampaignReport& r) {
  char fp[32];
  std::snprintf(fp, sizeof(fp), "%016llx", static_cast<unsigned long long>(r.fingerprint));
  std::string out =
      "{\"seeds\":" + std::to_string(r.scenarios) + ",\"first_seed\":" + std::to_string(r.options.first_seed) +
      ",\"canary\":" + (r.options.swallow_errors_canary ? "true" : "false") +
      ",\"safety_failures\":" + std::to_string(r.safety_failures) +
      ",\"liveness_failures\":" + std::to_string(r.liveness_failures) + ",\"ops_ok\":" + std::to_string(r.ops_ok) +
      ",\"ops_failed\":" + std::to_string(r.ops_failed) +
      ",\"creation_refusals\":" + std::to_string(r.creation_refusals) + ",\"shrinks\":" + std::to_string(r.shrinks) +
      ",\"buggify_fired\":" + std::to_string(r.buggify_fired) + ",\"kinds\":{";
  for (int k = 0; k < faults::kFaultKindCount; ++k) {
    const auto kk = static_cast<std::size_t>(k);
    const KindOutcome& ko = r.kinds[kk];
    if (k > 0) out += ",";
    out += jsonString(std::string(faults::faultKindName(static_cast<faults::FaultKind>(k)))) +
           ":{\"in_mix\":" + std::to_string(r.mixes_with[kk]) + ",\"injected\":" + std::to_string(ko.injected) +
           ",\"ops_lost\":" + std::to_string(ko.ops_failed) + ",\"recoveries\":" + std::to_string(ko.recoveries) +
           ",\"mean_recovery_us\":" + fixed(ko.recoveries > 0 ? ko.recovery_us / ko.recoveries : 0.0, 3) +
           ",\"max_recovery_us\":" + fixed(ko.max_recovery_us, 3) + "}";
  }
  out += "},\"failures\":[";
  for (std::size_t i = 0; i < r.failures.size(); ++i) {
    const auto& f = r.failures[i];
    out += (i ? "," : "") + std::string("{\"seed\":") + std::to_string(f.seed) +
           ",\"problem\":" + jsonString(f.problem) + ",\"scenario\":" + jsonString(f.scenario) +
           ",\"replay\":" + jsonString(f.replay) + "}";
  }
  out += "],\"fingerprint\":\"" + std::string(fp) + "\",\"wall_seconds\":" + fixed(r.wall_seconds, 3) +
         ",\"jobs\":" + std::to_string(std::clamp(r.options.jobs, 1, kMaxCampaignJobs)) +
         ",\"worker_error\":" + jsonString(r.worker_error) +
         ",\"verdict\":" + (campaignPassed(r) ? "\"ok\"" : "\"failed\"") + "}\n";
  return out;
}

int campaignMain(const std::vector<std::string>& args) {
  // Scenarios across simulated machines have a campaign of their own (multi_machine_campaign.h).
  if (!args.empty() && args[0] == "machines") return machineCampaignMain({args.begin() + 1, args.end()});
  CampaignOptions options;
  constexpr std::uint64_t kMaxSeeds = 10'000'000;  // bounded so a typo cannot run for days
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    auto next = [&]() -> const std::string* { return i + 1 < args.size() ? &args[++i] : nullptr; };
    if (flag == "--seeds" || flag == "--seed") {
      const std::string* v = next();
      const bool count = flag == "--seeds";
      auto n = v ? parseInt64(*v, count ? 1 : 0,
                              count ? static_cast<std::int64_t>(kMaxSeeds) : std::numeric_limits<std::int64_t>::max(),
                              flag.c_str())
                 : StatusOr<std::int64_t>(invalidArgumentError(flag + " needs a value"));
      if (!n.isOk()) {
        std::fprintf(stderr, "peerreduce-sim campaign: %s\n", n.status().toString().c_str());
        return 2;
      }
      (count ? options.seeds : options.first_seed) = static_cast<std::uint64_t>(*n);
    } else if (flag == "--jobs") {
      const std::string* v = next();
      auto n = v ? parseInt64(*v, 1, kMaxCampaignJobs, "--jobs")
                 : StatusOr<std::int64_t>(invalidArgumentError("--jobs needs a value"));
      if (!n.isOk()) {
        std::fprintf(stderr, "peerreduce-sim campaign: %s\n", n.status().toString().c_str());
        return 2;
      }
      options.jobs = static_cast<int>(*n);
    } else if (flag == "--json") {
      options.json = true;
    } else if (flag == "--canary") {
      const std::string* v = next();
      if (!v || *v != "swallow-errors") {
        std::fprintf(stderr, "peerreduce-sim campaign: --canary takes 'swallow-errors'\n");
        return 2;
      }
      options.swallow_errors_canary = true;
    } else if (flag == "--help" || flag == "-h") {
      std::printf(
          "usage: peerreduce-sim campaign [--seeds N] [--seed S] [--jobs J] [--json] [--canary swallow-errors]\n"
          "Runs N seeded fault scenarios (seeds S..S+N-1) and checks safety and liveness.\n"
          "--jobs J runs J scenarios at a time (1..64, default 1); the report does not depend on it.\n"
          "Exit status: 0 no failure, 1 a safety or liveness failure, 2 bad input.\n");
      return 0;
    } else {
      std::fprintf(stderr, "peerreduce-sim campaign: unknown option '%s'; see --help\n", flag.c_str());
      return 2;
    }
  }
  const CampaignReport report = runCampaign(options);
  const std::string text = options.json ? formatJson(report) : formatText(report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return campaignPassed(report) ? 0 : 1;
}

}  // namespace peerreduce::sim::campaign
