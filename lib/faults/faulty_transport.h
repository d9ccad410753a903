// FaultyTransport: a decorator over any Transport that injects faults at named sites.
//
// Sites (each error typed and naming the rank, peer or link and the step):
//   openSymmetric  pool exhaustion, transient or persistent       -> kOutOfMemory
//   connectPeers   an IPC handle that fails to open               -> kUnavailable naming the peer
//                  an access probe that fails (faults_probe.cc)   -> kUnavailable naming the peer, and the
//                                                                    peer in ProbeFallback::failedProbes
//                  a corrupt or truncated peer record, forwarded so the inner transport must refuse it (kCorrupt)
//   submit         a crashed rank forwards nothing                 -> kPeerLost naming itself
//                  a plan step over a dead link                    -> kLinkDown naming the link and the step
//                  a rank stalled forever withholds its work (its peers time out)
//   virtual time   stalls for a while, delayed signals, links that die and crashes in the middle of an
//                  operation go through FaultHooks, which the simulator implements (SimFaultHooks);
//                  on a transport without hooks they strike at the next submit instead.
// Faults come from a schedule (inject) or from BUGGIFY-style sites that a run switches on with a
// probability (enableSites): code paths that are rare in production fire often under test.
//
// One FaultController is shared by the transports of all ranks of a world: it holds what is broken.
// Thread safety: the controller locks; ranks may use their transports from their own threads.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "faults/fault_plan.h"
#include "memory/pinned_host_pool.h"
#include "peerreduce/transport.h"

namespace peerreduce::faults {

// Faults that need the transport's clock (virtual time on the simulator).
class FaultHooks {
 public:
  virtual ~FaultHooks() = default;
  virtual void setLinkDown(int from, int to, bool down) = 0;
  virtual void setSignalDelay(int from, int to, double delay_us) = 0;
  virtual void stallRank(int rank, double stall_us) = 0;
  // `rank` executes `actions` more actions and then never again.
  virtual void haltRank(int rank, std::uint64_t actions) = 0;
  // `rank`'s next copy through pinned host memory (a host-staged link) takes stall_us longer.
  virtual void stallHostCopy(int rank, double stall_us) = 0;
};

// BUGGIFY sites: places in the transport that misbehave (within the contract) when switched on.
enum class BuggifySite : int {
  kSubmitStall = 0,   // a short stall before an operation (well under the wait deadline)
  kSubmitSlowSignal,  // one signal path is slow for an operation
  kOpenExhausted,     // symmetric memory cannot be opened on the first try
};
inline constexpr int kBuggifySiteCount = 3;

class FaultController {
 public:
  FaultController(int world_size, std::shared_ptr<FaultHooks> hooks);

  int worldSize() const { return world_size_; }
  bool hasHooks() const { return hooks_ != nullptr; }

  // Makes `fault` take effect now (the caller decides when: before an operation's submits, or after
  // them for a fault in the middle of an operation). kInvalidArgument for ranks outside the world.
  Status inject(const Fault& fault);
  // Ends every fault that is not permanent (stalls, delays, exhaustion, bad records, IPC failures).
  void healTransient();
  // BUGGIFY: switches on the sites in `mask`; each then fires with `probability` per visit. The draws
  // are a function of (seed, rank, site, visit number of that rank at that site), so a run replays
  // bit for bit even when ranks visit sites from different threads in a different order.
  void enableSites(std::uint32_t mask, double probability, std::uint64_t seed);
  std::uint64_t sitesFired() const;

  // Canary: a deliberately broken injector that reports success on a rank whose operation failed.
  // The campaign must catch it (tests/faults/); never set outside that test.
  void setSwallowErrorsCanary(bool on);

  // The pinned pool `rank`'s communicator handed its transport (LinkAdoption), for kPinnedExhausted.
  void registerPinnedPool(int rank, std::shared_ptr<PinnedHostPool> pool);

  bool crashed(int rank) const;
  bool stalledForever(int rank) const;
  bool linkDown(int from, int to) const;               // either direction counts for routing
  std::vector<std::pair<int, int>> deadLinks() const;  // from < to, each once

 private:
  friend class FaultyTransport;
  bool fire(int rank, BuggifySite site);
  double draw(int rank, BuggifySite site);  // uniform in [0, 1), the next of this rank's and site's stream
  Status checkOpen(int rank);
  Status editRecords(int rank, std::vector<std::vector<std::byte>>& records);
  // kPeerLost / kLinkDown / withheld: what submit on `rank` must do before forwarding.
  enum class SubmitVerdict { kForward, kRefuse, kWithhold };
  SubmitVerdict beforeSubmit(int rank, const ExecutionRequest& request, Status* refusal, std::uint64_t* halt_after);
  void afterSubmit(int rank, std::uint64_t halt_after);
  Status rankStatus(int rank) const;
  bool swallowErrors() const;

  struct PendingCrash {
    bool pending = false;
    std::uint64_t step = 0;
  };
  const int world_size_;
  std::shared_ptr<FaultHooks> hooks_;
  mutable std::mutex mutex_;
  std::vector<char> crashed_, stalled_forever_;
  std::vector<PendingCrash> pending_crash_;
  std::vector<char> link_down_;              // n x n
  std::vector<char> ipc_fail_, bad_record_;  // n x n: [rank * n + peer]; bad_record_: 1 corrupt, 2 truncated
  std::vector<int> exhausted_;               // per rank: >0 failures left, -1 persistent
  std::uint32_t site_mask_ = 0;
  double site_probability_ = 0.0;
  std::uint64_t site_seed_ = 0;
  std::vector<std::uint64_t> site_visits_;  // per rank x site
  std::uint64_t sites_fired_ = 0;
  bool swallow_canary_ = false;
  std::vector<std::shared_ptr<PinnedHostPool>> pinned_pools_;  // per rank; null until adopted
  std::vector<std::vector<PinnedBlock>> pinned_taken_;         // per rank: what kPinnedExhausted holds
  // Host-staged faults (faults_host_staged.cc), called under mutex_.
  Status injectHostStaged(const Fault& fault);
  // Probe faults (faults_probe.cc): per [rank * n + peer], what fails.
  static constexpr char kProbeFailsDirect = 1;  // the probe over a direct path (not a host-staged pair)
  static constexpr char kProbeFailsAlways = 2;  // the probe over any path
  std::vector<char> probe_fail_;
  // The peers whose probe `rank` fails, given the pairs that fell back to host staging (`host_staged`,
  // n x n, empty for none).
  std::vector<int> failingProbes(int rank, const std::vector<std::uint8_t>& host_staged) const;
};

class FaultyTransport : public TransportWrapper, private LinkAdoption, private ProbeFallback {
 public:
  FaultyTransport(std::shared_ptr<Transport> target, std::shared_ptr<FaultController> controller)
      : TransportWrapper(std::move(target)), controller_(std::move(controller)) {}

  TransportIdentity identity() const override {
    TransportIdentity inner = TransportWrapper::identity();
    inner.name = "faulty(" + inner.name + ")";
    return inner;
  }
  StatusOr<OpenedRegion> openSymmetric(std::size_t bytes) override;
  Status connectPeers(const std::vector<std::vector<std::byte>>& records) override;
  Status submit(const ExecutionRequest& request, StreamHandle stream) override;
  Status synchronize(StreamHandle stream, std::chrono::milliseconds timeout) override;
  Status asyncError() const override;
  // The injected faults as a failure detector sees them (a crashed or forever-stalled rank is lost, an
  // injected dead link is down); otherwise the inner transport's view.
  PeerHealth peerHealth(int peer) const override;
  // The inner capabilities, with LinkAdoption passing through this transport where the inner has it, so
  // the controller learns the rank's pinned pool, and ProbeFallback too, so injected probe failures are
  // reported and the pairs that fell back known.
  TransportCapabilities capabilities() override;

 private:
  Status adoptLinks(const Topology& agreed, std::shared_ptr<PinnedHostPool> staging) override;
  std::vector<int> failedProbes() const override;
  Status fallBackToHostStaging(const std::vector<std::uint8_t>& pairs) override;
  // After the inner connectPeers succeeded: kUnavailable naming the peers whose probe an injected fault
  // fails (faults_probe.cc).
  Status probePeers();

  std::shared_ptr<FaultController> controller_;
  std::vector<int> failed_probes_;         // of the last connectPeers
  std::vector<std::uint8_t> host_staged_;  // the pairs that fell back so far (n x n; empty: none)
};

}  // namespace peerreduce::faults
