// The ranks' agreement on access probes that failed (docs/ARCHITECTURE.md, GPU backend, "Host-staged
// links"): after connectPeers every rank sends a ProbeReport (did it connect, which peers' probes failed)
// through the bootstrap, and every rank decides the same thing from the same reports: all connected;
// creation fails for a reason no fallback mends; or the pairs whose probe failed fall back to host-staged
// links and the exchange runs again (once: a probe that fails again fails creation, naming the pair and
// both attempts). Host-only and unit-tested (tests/lib/api/probe_agreement_test.cc); the sequence that
// uses it is lib/api/symmetric_exchange.cc.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce {

inline constexpr std::uint32_t kProbeReportMagic = 0x50525042;  // "PRPB"
inline constexpr std::uint32_t kProbeReportVersion = 1;
inline constexpr int kProbeReportWords = (kMaxWorldSize + 63) / 64;
// Exchanges a creation runs at most: the first, and one after a fallback.
inline constexpr int kMaxProbeAttempts = 2;

// One rank's report, a fixed layout crossing the bootstrap as bytes (untrusted: decideProbeFallback checks
// every field).
struct ProbeReport {
  std::uint32_t magic = kProbeReportMagic;
  std::uint32_t version = kProbeReportVersion;
  std::int32_t rank = 0;
  std::int32_t world_size = 0;
  std::int32_t attempt = 0;                            // 1, or 2 after a fallback
  std::uint32_t connected = 0;                         // 1: connectPeers succeeded
  std::uint64_t failed_peers[kProbeReportWords] = {};  // bit p: the probe of peer p failed
};
static_assert(sizeof(ProbeReport) == 24 + 8 * kProbeReportWords, "the report crosses the bootstrap as bytes");

// `rank`'s report; `failed_peers` must be peers of the world other than `rank` (kInvalidArgument naming
// the peer otherwise), and empty when `connected`.
StatusOr<ProbeReport> makeProbeReport(int rank, int world_size, int attempt, bool connected,
                                      const std::vector<int>& failed_peers);

enum class ProbeVerdict {
  kConnected,   // every rank connected
  kOtherError,  // some rank failed for a reason other than a probe: creation fails as before
  kFallBack,    // the pairs below fall back to host-staged links and the exchange runs again
};

struct ProbeDecision {
  ProbeVerdict verdict = ProbeVerdict::kConnected;
  // kFallBack: world x world, row-major, symmetric: 1 where either rank's probe of the other failed.
  std::vector<std::uint8_t> pairs;
  std::vector<std::pair<int, int>> pair_list;  // the same pairs, a < b, ascending
  std::vector<int> replacing;                  // ranks in any such pair: they move their memory to the host
  std::string describe() const;                // "0-1 (rank 0's probe of 1, rank 1's probe of 0)"
  std::string observed;                        // who saw which probe fail
};

// Every rank's report (in rank order, as gathered) for exchange `attempt` (1 or kMaxProbeAttempts). A
// malformed report is kCorrupt (magic, version, a peer outside the world or the rank itself, failed peers
// from a rank that says it connected, a connected field other than 0 or 1), a well-formed one from a rank
// in another state kMismatch (its rank, world size or attempt): naming the rank and the field. Probe
// failures at the last attempt are kUnavailable naming each pair and both attempts (`first`: the first
// attempt's decision). Every rank gets the same answer from the same reports.
StatusOr<ProbeDecision> decideProbeFallback(const std::vector<ProbeReport>& reports, int world_size, int attempt,
                                            const ProbeDecision& first = {});

}  // namespace peerreduce
