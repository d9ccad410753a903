#include "faults/faulty_transport.h"

#include <algorithm>

namespace peerreduce::faults {
namespace {

std::string rankName(int rank) { return "rank " + std::to_string(rank); }

// The first step of `rank`'s program that reads, writes or signals over a dead link, or -1.
int firstStepOverDeadLink(const Plan& plan, int rank, const std::vector<char>& link_down, int n, int* dead_peer) {
  const RankProgram& program = plan.programs[static_cast<std::size_t>(rank)];
  auto dead = [&](int peer) {
    return peer >= 0 && peer < n && link_down[static_cast<std::size_t>(rank * n + peer)] != 0;
  };
  for (std::size_t i = 0; i < program.steps.size(); ++i) {
    if (const auto peer = firstTouchedPeer(program, program.steps[i], rank, dead)) {
      *dead_peer = *peer;
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace

FaultController::FaultController(int world_size, std::shared_ptr<FaultHooks> hooks)
    : world_size_(world_size), hooks_(std::move(hooks)) {
  const auto n = static_cast<std::size_t>(world_size);
  crashed_.assign(n, 0);
  stalled_forever_.assign(n, 0);
  pending_crash_.assign(n, PendingCrash{});
  link_down_.assign(n * n, 0);
  ipc_fail_.assign(n * n, 0);
  probe_fail_.assign(n * n, 0);
  bad_record_.assign(n * n, 0);
  exhausted_.assign(n, 0);
  pinned_pools_.resize(n);
  pinned_taken_.resize(n);
}

Status FaultController::inject(const Fault& f) {
  const int n = world_size_;
  const bool needs_peer = f.kind == FaultKind::kLinkDown || f.kind == FaultKind::kLinkDownOneWay ||
                          f.kind == FaultKind::kHostLinkDown || f.kind == FaultKind::kDelayedSignal ||
                          f.kind == FaultKind::kIpcOpenFailure || f.kind == FaultKind::kCorruptRecord ||
                          f.kind == FaultKind::kTruncatedRecord || isProbeFault(f.kind);
  if (f.rank < 0 || f.rank >= n || (needs_peer && (f.peer < 0 || f.peer >= n || f.peer == f.rank))) {
    return invalidArgumentError("fault '" + f.describe() + "' names a rank outside the world of " + std::to_string(n));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const auto r = static_cast<std::size_t>(f.rank);
  const auto rp = static_cast<std::size_t>(f.rank * n + f.peer);
  const auto pr = static_cast<std::size_t>(f.peer * n + f.rank);
  switch (f.kind) {
    case FaultKind::kLinkDown:
      link_down_[rp] = link_down_[pr] = 1;
      if (hooks_) {
        hooks_->setLinkDown(f.rank, f.peer, true);
        hooks_->setLinkDown(f.peer, f.rank, true);
      }
      break;
    case FaultKind::kLinkDownOneWay:
      link_down_[rp] = 1;
      if (hooks_) hooks_->setLinkDown(f.rank, f.peer, true);
      break;
    case FaultKind::kStall:
      if (!hooks_) return unsupportedError("a stall for a while needs a transport with a clock (FaultHooks)");
      hooks_->stallRank(f.rank, f.duration_us);
      break;
    case FaultKind::kStallForever:
      stalled_forever_[r] = 1;
      if (hooks_) hooks_->haltRank(f.rank, f.step);
      break;
    case FaultKind::kCrash:
      pending_crash_[r] = PendingCrash{true, f.step};
      break;
    case FaultKind::kIpcOpenFailure:
      ipc_fail_[rp] = 1;
      break;
    case FaultKind::kCorruptRecord:
      bad_record_[rp] = 1;
      break;
    case FaultKind::kTruncatedRecord:
      bad_record_[rp] = 2;
      break;
    case FaultKind::kPoolExhaustedTransient:
      exhausted_[r] = std::max(exhausted_[r], 1);
      break;
    case FaultKind::kPoolExhaustedPersistent:
      exhausted_[r] = -1;
      break;
    case FaultKind::kDelayedSignal:
      if (!hooks_) return unsupportedError("a delayed signal needs a transport with a clock (FaultHooks)");
      hooks_->setSignalDelay(f.rank, f.peer, f.duration_us);
      break;
    case FaultKind::kHostLinkDown:
    case FaultKind::kHostCopyStall:
    case FaultKind::kPinnedExhausted:
      return injectHostStaged(f);
    case FaultKind::kProbeFailure:
    case FaultKind::kProbeFailurePersistent:
      probe_fail_[rp] = f.kind == FaultKind::kProbeFailure ? kProbeFailsDirect : kProbeFailsAlways;
      break;
  }
  return Status::ok();
}

void FaultController::healTransient() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::fill(ipc_fail_.begin(), ipc_fail_.end(), 0);
  std::fill(probe_fail_.begin(), probe_fail_.end(), 0);
  std::fill(bad_record_.begin(), bad_record_.end(), 0);
  std::fill(exhausted_.begin(), exhausted_.end(), 0);
  for (auto& taken : pinned_taken_) taken.clear();  // the pinned memory a fault held goes back
  if (!hooks_) return;
  for (int a = 0; a < world_size_; ++a) {
    for (int b = 0; b < world_size_; ++b) {
      if (a != b) hooks_->setSignalDelay(a, b, 0.0);
    }
  }
}

void FaultController::enableSites(std::uint32_t mask, double probability, std::uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  site_mask_ = mask;
  site_probability_ = probability;
  site_seed_ = seed;
  site_visits_.assign(static_cast<std::size_t>(world_size_) * kBuggifySiteCount, 0);
}

std::uint64_t FaultController::sitesFired() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return sites_fired_;
}

void FaultController::setSwallowErrorsCanary(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  swallow_canary_ = on;
}

bool FaultController::swallowErrors() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return swallow_canary_;
}

bool FaultController::crashed(int rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return crashed_[static_cast<std::size_t>(rank)] != 0 || pending_crash_[static_cast<std::size_t>(rank)].pending;
}

bool FaultController::stalledForever(int rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stalled_forever_[static_cast<std::size_t>(rank)] != 0;
}

bool FaultController::linkDown(int from, int to) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const int n = world_size_;
  return link_down_[static_cast<std::size_t>(from * n + to)] != 0 ||
         link_down_[static_cast<std::size_t>(to * n + from)] != 0;
}

std::vector<std::pair<int, int>> FaultController::deadLinks() const {
  std::vector<std::pair<int, int>> out;
  for (int a = 0; a < world_size_; ++a) {
    for (int b = a + 1; b < world_size_; ++b) {
      if (linkDown(a, b)) out.emplace_back(a, b);
    }
  }
  return out;
}

// Called with the mutex held. A splitmix64 finaliser over (seed, rank, site, visit): independent of
// the order in which ranks get here.
double FaultController::draw(int rank, BuggifySite site) {
  const std::size_t i = static_cast<std::size_t>(rank) * kBuggifySiteCount + static_cast<std::size_t>(site);
  std::uint64_t z = site_seed_ ^ (static_cast<std::uint64_t>(i) << 40) ^ site_visits_[i]++;
  for (int round = 0; round < 2; ++round) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
  }
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// Called with the mutex held.
bool FaultController::fire(int rank, BuggifySite site) {
  if (!((site_mask_ >> static_cast<int>(site)) & 1u)) return false;
  if (draw(rank, site) >= site_probability_) return false;
  ++sites_fired_;
  return true;
}

Status FaultController::checkOpen(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  int& left = exhausted_[static_cast<std::size_t>(rank)];
  const bool buggified = left == 0 && fire(rank, BuggifySite::kOpenExhausted);
  if (left == 0 && !buggified) return Status::ok();
  const bool persistent = left < 0;
  if (left > 0) --left;
  return outOfMemoryError(rankName(rank) + ": the symmetric pool is exhausted (injected " +
                          (persistent ? std::string("persistent") : std::string("transient")) +
                          " fault at openSymmetric); free symmetric memory or lower PEERREDUCE_POOL_BYTES");
}

Status FaultController::editRecords(int rank, std::vector<std::vector<std::byte>>& records) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int n = world_size_;
  for (int peer = 0; peer < n && peer < static_cast<int>(records.size()); ++peer) {
    const auto i = static_cast<std::size_t>(rank * n + peer);
    if (ipc_fail_[i]) {
      return unavailableError(rankName(rank) + " could not open the memory handle of rank " + std::to_string(peer) +
                              " (injected IPC open failure at connectPeers)");
    }
    auto& record = records[static_cast<std::size_t>(peer)];
    if (bad_record_[i] == 1) {
      // Every byte flipped: whatever the inner transport checks first (magic, world, rank) is wrong.
      for (auto& b : record) b = ~b;
    } else if (bad_record_[i] == 2) {
      record.resize(record.size() / 2);
    }
  }
  return Status::ok();
}

FaultController::SubmitVerdict FaultController::beforeSubmit(int rank, const ExecutionRequest& request, Status* refusal,
                                                             std::uint64_t* halt_after) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto r = static_cast<std::size_t>(rank);
  *halt_after = ~std::uint64_t{0};
  if (crashed_[r]) {
    *refusal = peerLostError(rankName(rank) + " crashed (injected fault); it runs nothing more");
    return SubmitVerdict::kRefuse;
  }
  if (stalled_forever_[r]) return SubmitVerdict::kWithhold;
  if (pending_crash_[r].pending) {
    pending_crash_[r].pending = false;
    crashed_[r] = 1;
    if (!hooks_) {
      *refusal = peerLostError(rankName(rank) + " crashed (injected fault) before submitting");
      return SubmitVerdict::kRefuse;
    }
    *halt_after = pending_crash_[r].step;
  }
  if (request.plan && request.plan->programs.size() == static_cast<std::size_t>(world_size_)) {
    int peer = -1;
    const int step = firstStepOverDeadLink(*request.plan, rank, link_down_, world_size_, &peer);
    if (step >= 0) {
      const RankProgram& program = request.plan->programs[r];
      *refusal = linkDownError(rankName(rank) + ": step #" + std::to_string(step) + " (" +
                               describeStep(program, program.steps[static_cast<std::size_t>(step)]) + ") of " +
                               request.plan->description + " needs link " + std::to_string(rank) + "->" +
                               std::to_string(peer) + ", which is down");
      return SubmitVerdict::kRefuse;
    }
  }
  if (hooks_ && fire(rank, BuggifySite::kSubmitStall))
    hooks_->stallRank(rank, 1.0 + 50.0 * draw(rank, BuggifySite::kSubmitStall));
  if (hooks_ && world_size_ > 1 && fire(rank, BuggifySite::kSubmitSlowSignal)) {
    hooks_->setSignalDelay(rank, (rank + 1) % world_size_, 1.0 + 100.0 * draw(rank, BuggifySite::kSubmitSlowSignal));
  }
  return SubmitVerdict::kForward;
}

void FaultController::afterSubmit(int rank, std::uint64_t halt_after) {
  if (halt_after != ~std::uint64_t{0} && hooks_) hooks_->haltRank(rank, halt_after);
}

Status FaultController::rankStatus(int rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (crashed_[static_cast<std::size_t>(rank)]) {
    return peerLostError(rankName(rank) + " crashed (injected fault)");
  }
  if (stalled_forever_[static_cast<std::size_t>(rank)]) {
    return timeoutError(rankName(rank) + " stopped making progress (injected stall without end)");
  }
  return Status::ok();
}

StatusOr<OpenedRegion> FaultyTransport::openSymmetric(std::size_t bytes) {
  PR_RETURN_IF_ERROR(controller_->checkOpen(rank()));
  return TransportWrapper::openSymmetric(bytes);
}

Status FaultyTransport::connectPeers(const std::vector<std::vector<std::byte>>& records) {
  std::vector<std::vector<std::byte>> edited = records;
  PR_RETURN_IF_ERROR(controller_->editRecords(rank(), edited));
  PR_RETURN_IF_ERROR(TransportWrapper::connectPeers(edited));
  return probePeers();
}

Status FaultyTransport::submit(const ExecutionRequest& request, StreamHandle stream) {
  Status refusal;
  std::uint64_t halt_after = 0;
  switch (controller_->beforeSubmit(rank(), request, &refusal, &halt_after)) {
    case FaultController::SubmitVerdict::kRefuse:
      return refusal;
    case FaultController::SubmitVerdict::kWithhold:
      return Status::ok();  // enqueued, never runs
    case FaultController::SubmitVerdict::kForward:
      break;
  }
  const Status forwarded = TransportWrapper::submit(request, stream);
  controller_->afterSubmit(rank(), halt_after);
  return forwarded;
}

Status FaultyTransport::synchronize(StreamHandle stream, std::chrono::milliseconds timeout) {
  if (controller_->swallowErrors()) {
    TransportWrapper::synchronize(stream, timeout).ignoreError();
    return Status::ok();
  }
  PR_RETURN_IF_ERROR(controller_->rankStatus(rank()));
  return TransportWrapper::synchronize(stream, timeout);
}

Status FaultyTransport::asyncError() const {
  if (controller_->swallowErrors()) return Status::ok();  // the canary's bug: failures look like success
  PR_RETURN_IF_ERROR(controller_->rankStatus(rank()));
  return TransportWrapper::asyncError();
}

}  // namespace peerreduce::faults

namespace peerreduce::faults {

PeerHealth FaultyTransport::peerHealth(int peer) const {
  if (peer < 0 || peer >= controller_->worldSize()) return PeerHealth::kUnknown;
  if (controller_->crashed(peer) || controller_->stalledForever(peer)) return PeerHealth::kLost;
  if (peer != rank() && controller_->linkDown(rank(), peer)) return PeerHealth::kLinkDown;
  return TransportWrapper::peerHealth(peer);
}

}  // namespace peerreduce::faults
