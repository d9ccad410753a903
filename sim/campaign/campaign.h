// The fault campaign: N seeded scenarios (scenario.h), a summary by fault kind, and for every
// failure the one command that replays it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenario.h"

namespace peerreduce::sim::campaign {

struct CampaignOptions {
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 100;
  bool json = false;
  bool swallow_errors_canary = false;
  int jobs = 1;  // worker processes running scenarios at once; the report does not depend on it
};
inline constexpr int kMaxCampaignJobs = 64;

struct CampaignFailure {
  std::uint64_t seed = 0;
  std::string problem;
  std::string scenario;
  std::string replay;  // the command line that replays it
};

struct CampaignReport {
  CampaignOptions options;
  std::uint64_t scenarios = 0;
  std::uint64_t safety_failures = 0;
  std::uint64_t liveness_failures = 0;
  std::uint64_t ops_ok = 0, ops_failed = 0, creation_refusals = 0, shrinks = 0, buggify_fired = 0;
  std::vector<KindOutcome> kinds = std::vector<KindOutcome>(faults::kFaultKindCount);
  std::vector<std::uint64_t> mixes_with = std::vector<std::uint64_t>(faults::kFaultKindCount, 0);
  std::vector<std::uint64_t> error_codes = std::vector<std::uint64_t>(16, 0);
  std::vector<CampaignFailure> failures;  // the first kMaxListedFailures
  std::uint64_t fingerprint = 0;          // of every scenario's fingerprint, in seed order
  std::string worker_error;               // a worker process died or hung: the campaign failed
  double wall_seconds = 0.0;
};
inline constexpr std::size_t kMaxListedFailures = 20;

std::string replayCommand(std::uint64_t seed, bool canary);
// No safety or liveness failure, and every worker finished.
bool campaignPassed(const CampaignReport& report);
CampaignReport runCampaign(const CampaignOptions& options);
std::string formatText(const CampaignReport& report);
std::string formatJson(const CampaignReport& report);

// `peerreduce-sim campaign ...`: parses args (after the word "campaign"), runs, prints; the exit status.
int campaignMain(const std::vector<std::string>& args);

}  // namespace peerreduce::sim::campaign
