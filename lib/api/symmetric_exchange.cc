#include "api/symmetric_exchange.h"

#include <cstring>
#include <string>

#include "api/probe_agreement.h"
#include "api/topology_agreement.h"
#include "bootstrap/rank_agreement.h"
#include "util/log.h"

namespace peerreduce {
namespace {

// A rank's symmetric-memory record as exchanged: status, length, bytes. A rank that failed to open
// its memory still takes part, so that every rank learns of the failure instead of timing out.
struct PeerRecordBlock {
  std::uint32_t ok;
  std::uint32_t length;
  std::byte bytes[kMaxPeerRecordBytes];
};

// Tells a transport that stages links through host memory which pairs the configuration forces
// host-staged and which pool its host memory comes from (before it opens its region).
Status configureHostStaging(Communicator::Impl& impl) {
  HostStaging* staging = impl.transport->capabilities().host_staging;
  if (staging == nullptr) return Status::ok();
  PR_ASSIGN_OR_RETURN(std::vector<std::uint8_t> forced, hostStagedPairs(impl.config.link_mask, impl.size));
  return staging->configureHostStaging(HostStagingRequest{std::move(forced), impl.pinned});
}

// Opens this rank's region (unless `before` failed), all-gathers the records and maps the peers. The
// returned status is a failure every rank already shares (a rank could not open its memory, a record was
// malformed); `connected` is this rank's connectPeers, which the ranks still have to agree on.
Status openAndConnect(Communicator::Impl& impl, const Status& before, Status& connected) {
  auto opened =
      before.isOk() ? impl.transport->openSymmetric(impl.config.memory.pool_bytes) : StatusOr<OpenedRegion>(before);
  StatusOr<std::vector<std::byte>> record = opened.isOk() ? StatusOr<std::vector<std::byte>>(std::move(opened->record))
                                                          : StatusOr<std::vector<std::byte>>(opened.status());
  if (opened.isOk()) impl.region_host_address = opened->host_address;
  PeerRecordBlock mine{};
  if (record.isOk() && record->size() > kMaxPeerRecordBytes) {
    record = internalError(impl.transport->name() + " made a peer record of " + std::to_string(record->size()) +
                           " bytes; the limit is " + std::to_string(kMaxPeerRecordBytes));
  }
  if (record.isOk()) {
    mine.ok = 1;
    mine.length = static_cast<std::uint32_t>(record->size());
    std::memcpy(mine.bytes, record->data(), record->size());
  }
  PR_ASSIGN_OR_RETURN(const std::vector<PeerRecordBlock> all, agreementOf(impl).gather(mine));
  if (!record.isOk())
    return record.status().withContext("opening symmetric memory on rank " + std::to_string(impl.rank));
  std::vector<std::vector<std::byte>> records(static_cast<std::size_t>(impl.size));
  for (int r = 0; r < impl.size; ++r) {
    const PeerRecordBlock& block = all[static_cast<std::size_t>(r)];
    if (block.ok != 1) {
      return unavailableError("rank " + std::to_string(r) + " could not open its symmetric memory; see its error");
    }
    if (block.length > kMaxPeerRecordBytes) {
      return corruptError("rank " + std::to_string(r) + " sent a symmetric-memory record of " +
                          std::to_string(block.length) + " bytes (limit " + std::to_string(kMaxPeerRecordBytes) + ")");
    }
    records[static_cast<std::size_t>(r)].assign(block.bytes, block.bytes + block.length);
  }
  connected = impl.transport->connectPeers(records);
  return Status::ok();
}

// Every rank's connectPeers outcome and failed probes, gathered and decided alike on every rank.
StatusOr<ProbeDecision> agreeOnProbes(const Communicator::Impl& impl, const Status& connected, int attempt,
                                      const ProbeDecision& first) {
  ProbeFallback* fallback = impl.transport->capabilities().probe_fallback;
  std::vector<int> failed;
  if (!connected.isOk() && fallback != nullptr) failed = fallback->failedProbes();
  if (!failed.empty()) {
    PR_WARN(impl.rank, "exchange %d: %s", attempt, connected.toString().c_str());
  }
  auto mine = makeProbeReport(impl.rank, impl.size, attempt, connected.isOk(), failed);
  // A transport that names impossible peers is a bug; still take part, as a rank that failed otherwise.
  if (!mine.isOk()) mine = makeProbeReport(impl.rank, impl.size, attempt, false, {});
  PR_ASSIGN_OR_RETURN(const std::vector<ProbeReport> all, agreementOf(impl).gather(*mine));
  return decideProbeFallback(all, impl.size, attempt, first);
}

}  // namespace

Status exchangeSymmetricMemory(Communicator::Impl& impl) {
  Status before = configureHostStaging(impl);
  ProbeDecision first;
  // Bounded: the first exchange, and at most one more after the failed pairs fell back.
  for (int attempt = 1; attempt <= kMaxProbeAttempts; ++attempt) {
    Status connected = Status::ok();
    PR_RETURN_IF_ERROR(openAndConnect(impl, before, connected));
    PR_ASSIGN_OR_RETURN(ProbeDecision decision, agreeOnProbes(impl, connected, attempt, first));
    if (decision.verdict != ProbeVerdict::kFallBack) {
      PR_RETURN_IF_ERROR(agreementOf(impl).outcome(connected, "map its peers' memory"));
      // Every rank mapped every region: names peers mapped host-staged regions by can go.
      HostStaging* staging = impl.transport->capabilities().host_staging;
      return agreementOf(impl).outcome(staging == nullptr ? Status::ok() : staging->peersConnected(),
                                       "remove the names of its host-staged memory");
    }
    std::string replacing;
    for (const int r : decision.replacing) replacing += (replacing.empty() ? "" : ",") + std::to_string(r);
    PR_WARN(impl.rank,
            "access probes failed on pairs %s; they fall back to host-staged links (ranks %s place their memory in "
            "pinned host memory) and the memory exchange runs again",
            decision.describe().c_str(), replacing.c_str());
    ProbeFallback* fallback = impl.transport->capabilities().probe_fallback;
    const Status fell = fallback == nullptr
                            ? internalError(impl.transport->name() + " reported failed probes but cannot fall back")
                            : fallback->fallBackToHostStaging(decision.pairs);
    PR_RETURN_IF_ERROR(agreementOf(impl).outcome(fell, "fall back to host-staged links"));
    first = std::move(decision);
    before = Status::ok();
  }
  return internalError("the memory exchange ended without a verdict");  // unreachable: the last attempt decides
}

}  // namespace peerreduce
