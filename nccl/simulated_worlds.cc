#include "nccl/simulated_worlds.h"

#include <map>
#include <mutex>
#include <string>

#include "nccl/type_mapping.h"
#include "peerreduce/peerreduce_sim.h"

namespace peerreduce::nccl {
namespace {

// Worlds between their creation by rank 0 and the last rank's attachment, by a number never reused.
class WorldTable {
 public:
  std::uint64_t add(prSimWorld_t world) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t number = ++last_;
    worlds_.emplace(number, world);
    return number;
  }
  prSimWorld_t find(std::uint64_t number) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = worlds_.find(number);
    return found == worlds_.end() ? nullptr : found->second;
  }
  void remove(std::uint64_t number) {
    std::lock_guard<std::mutex> lock(mutex_);
    worlds_.erase(number);
  }

 private:
  mutable std::mutex mutex_;
  std::uint64_t last_ = 0;  // 0 is never a number: it says "rank 0 has no world"
  std::map<std::uint64_t, prSimWorld_t> worlds_;
};

WorldTable& table() {
  static WorldTable worlds;
  return worlds;
}

}  // namespace

Status attachSimulatedWorld(const RankAgreement& agreement, std::uint64_t seed, prBootstrap_t bootstrap) {
  const bool creator = agreement.rank() == 0;
  prSimWorld_t world = nullptr;
  Status made;
  std::uint64_t number = 0;
  if (creator) {
    const prResult_t result = prSimWorldCreate(agreement.size(), seed, &world);
    if (result == prSuccess) {
      number = table().add(world);
    } else {
      made = cApiFailure(result);
    }
  }
  auto numbers = agreement.gather(number);
  if (!numbers.isOk()) {
    if (creator && world != nullptr) {
      table().remove(number);
      (void)prSimWorldDestroy(world);
    }
    return numbers.status();
  }
  const std::uint64_t shared = (*numbers)[0];
  Status attached = made;
  if (attached.isOk() && shared == 0) attached = unavailableError("rank 0 could not create the simulated world");
  if (attached.isOk()) {
    world = creator ? world : table().find(shared);
    if (world == nullptr) {
      attached =
          unavailableError("rank " + std::to_string(agreement.rank()) +
                           " cannot find rank 0's simulated world in its process: PEERREDUCE_NCCL_SIMULATE needs "
                           "every rank as a thread of one process");
    } else {
      const prResult_t result = prSimWorldAttachBootstrap(world, bootstrap);
      if (result != prSuccess) attached = cApiFailure(result);
    }
  }
  const Status everyone = agreement.outcome(attached, "attach to the simulated world");
  if (creator && world != nullptr) {
    // Every rank has attached (or given up): the bootstraps own the world now.
    table().remove(shared);
    (void)prSimWorldDestroy(world);
  }
  return everyone;
}

}  // namespace peerreduce::nccl
