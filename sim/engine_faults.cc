// SimEngine's fault hooks: dead links, delayed signals, stalls and crashes in virtual time.
//
// They live apart from engine.cc so that the fault-free engine reads as before; engine.cc calls in
// only when FaultState::any is set, so a run without faults pays one predictable branch per step.
#include <algorithm>

#include "engine.h"

namespace peerreduce::sim {

void SimEngine::ensureFaultState() {
  if (faults_.any) return;
  const auto n = static_cast<std::size_t>(world_size_);
  faults_.link_down.assign(n * n, 0);
  faults_.signal_delay.assign(n * n, 0.0);
  faults_.stall_us.assign(n, 0.0);
  faults_.actions_left.assign(n, -1);
  faults_.host_copy_stall_us.assign(n, 0.0);
  faults_.any = true;
}

void SimEngine::setLinkDown(int from, int to, bool down) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (from < 0 || to < 0 || from >= world_size_ || to >= world_size_) return;
  ensureFaultState();
  faults_.link_down[static_cast<std::size_t>(from * world_size_ + to)] = down ? 1 : 0;
}

void SimEngine::setSignalDelay(int from, int to, double delay_us) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (from < 0 || to < 0 || from >= world_size_ || to >= world_size_) return;
  ensureFaultState();
  faults_.signal_delay[static_cast<std::size_t>(from * world_size_ + to)] = std::max(0.0, delay_us);
}

void SimEngine::stallRank(int rank, double stall_us) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rank < 0 || rank >= world_size_) return;
  ensureFaultState();
  faults_.stall_us[static_cast<std::size_t>(rank)] += std::max(0.0, stall_us);
}

void SimEngine::haltRank(int rank, std::uint64_t actions) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rank < 0 || rank >= world_size_) return;
  ensureFaultState();
  faults_.actions_left[static_cast<std::size_t>(rank)] = static_cast<std::int64_t>(actions);
}

void SimEngine::stallHostCopy(int rank, double stall_us) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rank < 0 || rank >= world_size_) return;
  ensureFaultState();
  faults_.host_copy_stall_us[static_cast<std::size_t>(rank)] += std::max(0.0, stall_us);
}

PeerHealth SimEngine::peerHealth(int rank, int peer) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (peer < 0 || peer >= world_size_ || rank < 0 || rank >= world_size_) return PeerHealth::kUnknown;
  if (!faults_.any) return PeerHealth::kAlive;
  if (halted(peer)) return PeerHealth::kLost;
  if (peer != rank && (faults_.link_down[static_cast<std::size_t>(rank * world_size_ + peer)] != 0 ||
                       faults_.link_down[static_cast<std::size_t>(peer * world_size_ + rank)] != 0)) {
    return PeerHealth::kLinkDown;
  }
  return PeerHealth::kAlive;
}

bool SimEngine::halted(int rank) const { return faults_.actions_left[static_cast<std::size_t>(rank)] == 0; }

double SimEngine::extraSignalDelay(int from, int to) const {
  return faults_.signal_delay[static_cast<std::size_t>(from * world_size_ + to)];
}

bool SimEngine::faultBeforeStep(int rank, Operation& op, const Step& s) {
  const auto r = static_cast<std::size_t>(rank);
  RankState& state = *ranks_[r];
  if (faults_.stall_us[r] > 0.0) {
    // The rank was descheduled: its clock jumps, so its peers' waits on it may pass their deadlines.
    state.clock_us += faults_.stall_us[r];
    faults_.stall_us[r] = 0.0;
  }
  std::int64_t& left = faults_.actions_left[r];
  if (left == 0) return true;
  if (left > 0) --left;
  // The ranks whose memory this step crosses a link to (a wait reads only this rank's own counter).
  const RankProgram& program = op.request.plan->programs[r];
  const auto dead_peer = firstTouchedPeer(program, s, rank, [&](int peer) {
    return peer >= 0 && peer < world_size_ &&
           faults_.link_down[static_cast<std::size_t>(rank * world_size_ + peer)] != 0;
  });
  if (!dead_peer) return false;
  failRank(rank, linkDownError("rank " + std::to_string(rank) + " op " + std::to_string(op.seq) + " step #" +
                               std::to_string(op.pc) + " (" + describeStep(program, s) +
                               "): " + (hostStaged(rank, *dead_peer) ? "host-staged link " : "link ") +
                               std::to_string(rank) + "->" + std::to_string(*dead_peer) + " is down"));
  return true;
}

}  // namespace peerreduce::sim
