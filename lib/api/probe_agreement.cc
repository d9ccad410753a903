#include "api/probe_agreement.h"

namespace peerreduce {
namespace {

bool bitOf(const ProbeReport& report, int peer) { return ((report.failed_peers[peer / 64] >> (peer % 64)) & 1u) != 0; }

std::string pairsText(const std::vector<std::pair<int, int>>& pairs) {
  std::string out;
  for (const auto& [a, b] : pairs) out += (out.empty() ? "" : ",") + std::to_string(a) + "-" + std::to_string(b);
  return out;
}

// Checks `report` as rank `index`'s for `attempt`.
Status checkReport(const ProbeReport& report, int index, int world_size, int attempt) {
  const std::string who = "rank " + std::to_string(index) + "'s access-probe report: ";
  if (report.magic != kProbeReportMagic) return corruptError(who + "bad magic");
  if (report.version != kProbeReportVersion) {
    return corruptError(who + "version " + std::to_string(report.version) + ", expected " +
                        std::to_string(kProbeReportVersion));
  }
  if (report.rank != index) return mismatchError(who + "names rank " + std::to_string(report.rank));
  if (report.world_size != world_size) {
    return mismatchError(who + "world size " + std::to_string(report.world_size) + ", expected " +
                         std::to_string(world_size));
  }
  if (report.attempt != attempt) {
    return mismatchError(who + "exchange " + std::to_string(report.attempt) + ", this rank is at exchange " +
                         std::to_string(attempt));
  }
  if (report.connected > 1) return corruptError(who + "connected field " + std::to_string(report.connected));
  bool any = false;
  for (int peer = 0; peer < kProbeReportWords * 64; ++peer) {
    if (!bitOf(report, peer)) continue;
    if (peer >= world_size || peer == index) {
      return corruptError(who + "names peer " + std::to_string(peer) + " in a world of " + std::to_string(world_size));
    }
    any = true;
  }
  if (any && report.connected == 1) return corruptError(who + "failed probes from a rank that connected");
  return Status::ok();
}

}  // namespace

StatusOr<ProbeReport> makeProbeReport(int rank, int world_size, int attempt, bool connected,
                                      const std::vector<int>& failed_peers) {
  ProbeReport report;
  report.rank = rank;
  report.world_size = world_size;
  report.attempt = attempt;
  report.connected = connected ? 1 : 0;
  if (connected && !failed_peers.empty()) {
    return invalidArgumentError("rank " + std::to_string(rank) + " reports failed probes although it connected");
  }
  for (const int peer : failed_peers) {
    if (peer < 0 || peer >= world_size || peer == rank || peer >= kMaxWorldSize) {
      return invalidArgumentError("rank " + std::to_string(rank) + " reports a failed probe of rank " +
                                  std::to_string(peer) + " in a world of " + std::to_string(world_size));
    }
    report.failed_peers[peer / 64] |= std::uint64_t{1} << (peer % 64);
  }
  return report;
}

std::string ProbeDecision::describe() const { return pairsText(pair_list) + " (" + observed + ")"; }

StatusOr<ProbeDecision> decideProbeFallback(const std::vector<ProbeReport>& reports, int world_size, int attempt,
                                            const ProbeDecision& first) {
  if (world_size < 1 || world_size > kMaxWorldSize || reports.size() != static_cast<std::size_t>(world_size)) {
    return invalidArgumentError(std::to_string(reports.size()) + " access-probe reports for a world of " +
                                std::to_string(world_size));
  }
  if (attempt < 1 || attempt > kMaxProbeAttempts) {
    return invalidArgumentError("access-probe exchange " + std::to_string(attempt) + " (1.." +
                                std::to_string(kMaxProbeAttempts) + ")");
  }
  const auto n = static_cast<std::size_t>(world_size);
  ProbeDecision decision;
  decision.pairs.assign(n * n, 0);
  bool other_error = false;
  for (int r = 0; r < world_size; ++r) {
    const ProbeReport& report = reports[static_cast<std::size_t>(r)];
    PR_RETURN_IF_ERROR(checkReport(report, r, world_size, attempt));
    bool probes_failed = false;
    for (int peer = 0; peer < world_size; ++peer) {
      if (!bitOf(report, peer)) continue;
      probes_failed = true;
      decision.pairs[static_cast<std::size_t>(r) * n + static_cast<std::size_t>(peer)] = 1;
      decision.pairs[static_cast<std::size_t>(peer) * n + static_cast<std::size_t>(r)] = 1;
      decision.observed += (decision.observed.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) +
                           "'s probe of rank " + std::to_string(peer);
    }
    if (report.connected == 0 && !probes_failed) other_error = true;
  }
  if (other_error) {
    decision.verdict = ProbeVerdict::kOtherError;
    return decision;
  }
  std::vector<bool> in_pair(n, false);
  for (int a = 0; a < world_size; ++a) {
    for (int b = a + 1; b < world_size; ++b) {
      if (decision.pairs[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)] == 0) continue;
      decision.pair_list.emplace_back(a, b);
      in_pair[static_cast<std::size_t>(a)] = in_pair[static_cast<std::size_t>(b)] = true;
    }
  }
  if (decision.pair_list.empty()) {
    decision.verdict = ProbeVerdict::kConnected;
    return decision;
  }
  if (attempt == kMaxProbeAttempts) {
    return unavailableError("access probes failed again after falling back to host-staged links: pairs " +
                            decision.describe() + " at exchange " + std::to_string(attempt) +
                            "; exchange 1 had failed on pairs " + first.describe() +
                            "; peer memory is not reachable through device or host memory");
  }
  for (int r = 0; r < world_size; ++r) {
    if (in_pair[static_cast<std::size_t>(r)]) decision.replacing.push_back(r);
  }
  decision.verdict = ProbeVerdict::kFallBack;
  return decision;
}

}  // namespace peerreduce
