// Access probes that fail at creation: the fault injector's side of the fallback to host-staged links
// (docs/ARCHITECTURE.md, GPU backend). The simulator maps every region it is given, so the probe of a
// named pair fails here, after the inner transport connected, as a GPU's token read through a broken
// peer-to-peer mapping would; the communicator then agrees on the pairs and falls back through this
// transport to the inner one (the simulator reports them host-staged from then on). kProbeFailure strikes
// only while the pair is direct, so the second exchange connects; kProbeFailurePersistent strikes on the
// host-staged path too, so creation fails naming the pair and both exchanges.
#include "faults/faulty_transport.h"

namespace peerreduce::faults {

std::vector<int> FaultController::failingProbes(int rank, const std::vector<std::uint8_t>& host_staged) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto n = static_cast<std::size_t>(world_size_);
  std::vector<int> peers;
  if (rank < 0 || rank >= world_size_) return peers;
  for (std::size_t peer = 0; peer < n; ++peer) {
    const std::size_t i = static_cast<std::size_t>(rank) * n + peer;
    const bool staged = host_staged.size() == n * n && host_staged[i] != 0;
    const char fails = probe_fail_[i];
    if (fails == kProbeFailsAlways || (fails == kProbeFailsDirect && !staged)) peers.push_back(static_cast<int>(peer));
  }
  return peers;
}

Status FaultyTransport::probePeers() {
  failed_probes_ = controller_->failingProbes(rank(), host_staged_);
  if (failed_probes_.empty()) return Status::ok();
  std::string peers;
  for (const int peer : failed_probes_) peers += (peers.empty() ? "" : ", ") + std::to_string(peer);
  return unavailableError("rank " + std::to_string(rank()) + ": the access probe of rank(s) " + peers +
                          " failed (injected probe failure at connectPeers); peer memory is not reachable directly");
}

std::vector<int> FaultyTransport::failedProbes() const { return failed_probes_; }

Status FaultyTransport::fallBackToHostStaging(const std::vector<std::uint8_t>& pairs) {
  ProbeFallback* inner = TransportWrapper::capabilities().probe_fallback;
  if (inner == nullptr) return internalError(name() + ": the inner transport lost its ProbeFallback");
  PR_RETURN_IF_ERROR(inner->fallBackToHostStaging(pairs));
  if (host_staged_.size() != pairs.size()) host_staged_.assign(pairs.size(), 0);
  for (std::size_t i = 0; i < pairs.size(); ++i) host_staged_[i] = (host_staged_[i] != 0 || pairs[i] != 0) ? 1 : 0;
  failed_probes_.clear();
  return Status::ok();
}

}  // namespace peerreduce::faults
