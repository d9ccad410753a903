// SimEngine and the links a communicator agreed on: pricing and checking steps on them, and carrying
// the data of host-staged links through pinned host memory.
//
// A rank's communicator hands the engine its agreed links (the link mask applied) and its pinned pool
// (LinkAdoption). From then on the rank's steps are priced with the agreed figures, the same numbers the
// selector's cost model used, and a step that reads or writes a peer over a host-staged link goes through
// a block of the pool: the peer's data is copied into pinned memory and the step reads it there (a write
// to a peer lands in a block and is copied out), as a GPU without peer access stages through host memory.
// So PEERREDUCE_PINNED_LIMIT_BYTES bounds the traffic in flight and the pool's statistics count it; a pool
// that cannot give a block fails the operation with its kOutOfMemory.
#include <cstring>

#include "engine.h"

namespace peerreduce::sim {

Status SimEngine::adoptLinks(int rank, const Topology& agreed, std::shared_ptr<PinnedHostPool> staging) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string who = "simulated rank " + std::to_string(rank) + ": ";
  if (rank < 0 || rank >= world_size_) return invalidArgumentError(who + "outside the world");
  if (agreed.worldSize() != world_size_) {
    return invalidArgumentError(who + "agreed links for " + std::to_string(agreed.worldSize()) +
                                " ranks in a world of " + std::to_string(world_size_));
  }
  if (!staging) return invalidArgumentError(who + "no pinned pool to stage host-staged links through");
  RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  if (!state.queue.empty()) return invalidArgumentError(who + "links adopted while operations are queued");
  state.links = std::make_unique<Topology>(agreed);
  state.timing = std::make_unique<TimingModel>(*state.links);
  state.phase = std::make_unique<PhaseTimer>(*state.timing, rank);
  state.staging = std::move(staging);
  return Status::ok();
}

Topology SimEngine::topology() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Topology links = topology_;
  const auto n = static_cast<std::size_t>(world_size_);
  for (std::size_t i = 0; i < fallen_back_.size(); ++i) {
    const int a = static_cast<int>(i / n);
    const int b = static_cast<int>(i % n);
    // A pair that was host-staged already keeps its own figures, as under the link mask.
    if (fallen_back_[i] != 0 && links.link(a, b).link_class != LinkClass::kHostStaged) {
      links.setLink(a, b, fallback_link_);
    }
  }
  return links;
}

Status SimEngine::fallBackToHostStaging(int rank, const std::vector<std::uint8_t>& pairs, const LinkInfo& host_link) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string who = "simulated rank " + std::to_string(rank) + ": ";
  const auto n = static_cast<std::size_t>(world_size_);
  if (rank < 0 || rank >= world_size_) return invalidArgumentError(who + "outside the world");
  if (pairs.size() != n * n) {
    return invalidArgumentError(who + "host-staged pairs of " + std::to_string(pairs.size()) + " entries for " +
                                std::to_string(n) + " x " + std::to_string(n));
  }
  RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  if (!state.queue.empty()) return invalidArgumentError(who + "falls back while operations are queued");
  state.memory.reset();
  state.memory_bytes = 0;
  state.connected = false;
  if (fallen_back_.empty()) fallen_back_.assign(n * n, 0);
  for (std::size_t i = 0; i < pairs.size(); ++i) fallen_back_[i] = (fallen_back_[i] != 0 || pairs[i] != 0) ? 1 : 0;
  fallback_link_ = host_link;
  return Status::ok();
}

const Topology& SimEngine::linksOf(int rank) const {
  const RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  return state.links ? *state.links : topology_;
}

const TimingModel& SimEngine::timingOf(int rank) const {
  const RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  return state.timing ? *state.timing : timing_;
}

bool SimEngine::hostStaged(int rank, int peer) const {
  return peer != rank && linksOf(rank).link(rank, peer).link_class == LinkClass::kHostStaged;
}

bool SimEngine::linkUsable(int rank, int peer) const {
  if (peer == rank) return true;
  if (!linksOf(rank).link(rank, peer).connected()) return false;
  // Staging needs only host memory, which every simulated device reaches; a direct link needs the machine's.
  return hostStaged(rank, peer) || topology_.link(rank, peer).connected();
}

bool SimEngine::stageIn(int rank, Operation& op, const Step& s, std::size_t bytes, std::byte*& dst) {
  RankState& state = *ranks_[static_cast<std::size_t>(rank)];
  const RankProgram& program = op.request.plan->programs[static_cast<std::size_t>(rank)];
  state.staged.clear();
  auto block = [&](int peer) -> std::byte* {
    auto taken = state.staging->acquire(bytes);
    if (!taken.isOk()) {
      state.staged.clear();
      failRank(rank, Status(taken.status().code(),
                            "rank " + std::to_string(rank) + " op " + std::to_string(op.seq) + " step #" +
                                std::to_string(op.pc) + " (" + describeStep(program, s) + "): staging " +
                                std::to_string(bytes) + " bytes over the host-staged link " + std::to_string(rank) +
                                "->" + std::to_string(peer) + ": " + taken.status().message()));
      return nullptr;
    }
    auto* data = static_cast<std::byte*>(taken->data());
    state.staged.push_back(std::move(taken).value());
    return data;
  };
  for (std::uint32_t i = 0; i < s.src_count; ++i) {
    const int peer = program.sources[s.src_begin + i].rank;
    if (!hostStaged(rank, peer)) continue;
    std::byte* staged = block(peer);
    if (staged == nullptr) return false;
    std::memcpy(staged, sources_[i], bytes);  // the owner's copy into host memory
    sources_[i] = staged;                     // the reader reads it there
  }
  if (hostStaged(rank, s.dst.rank)) {
    std::byte* staged = block(s.dst.rank);
    if (staged == nullptr) return false;
    std::memcpy(staged, dst, bytes);  // a reduction may fold into what the destination holds
    dst = staged;
  }
  // An injected stall of the rank's host copies strikes the first step that staged anything.
  if (faults_.any && !state.staged.empty()) {
    double& stall = faults_.host_copy_stall_us[static_cast<std::size_t>(rank)];
    if (stall > 0.0) {
      state.clock_us += stall;
      stall = 0.0;
      state.phase->close();  // the steps after it start late: the stall must not be folded into a phase
    }
  }
  return true;
}

void SimEngine::stageOut(int rank, std::byte* staged_dst, std::byte* real_dst, std::size_t bytes) {
  if (staged_dst != real_dst) std::memcpy(real_dst, staged_dst, bytes);
  ranks_[static_cast<std::size_t>(rank)]->staged.clear();  // every block returns to the pool, idle
}

}  // namespace peerreduce::sim
