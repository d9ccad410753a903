// SimEngine::regionOf: the host address of a rank's symmetric region (OpenedRegion::host_address and
// SimWorld::hostRegion).
// Kept apart from engine.cc, which runs plans: this only exposes memory openSymmetric made.
#include "engine.h"

namespace peerreduce::sim {

std::byte* SimEngine::regionOf(int rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rank < 0 || rank >= world_size_) return nullptr;
  return ranks_[static_cast<std::size_t>(rank)]->memory.get();
}

}  // namespace peerreduce::sim
