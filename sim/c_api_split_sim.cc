// The children of a split of a simulated communicator (prCommSplit): each child runs on a simulated world of
// its own, so it has its own scheduler, its own bootstrap once the split is over, and needs nothing of its
// parent afterwards. The first member to get here makes the world; the others find it under the split's
// number and the child's color, which every member names the same way.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "api/split_placement.h"
#include "c_api_sim_internal.h"
#include "prng.h"

namespace peerreduce::capi {
namespace {

// The children's worlds by (split, color). Entries hold no world: a world lives as long as a member's
// communicator, and an entry whose world is gone is dropped at the next lookup, so the table never holds
// more than the live children.
class ChildWorlds {
 public:
  StatusOr<std::shared_ptr<sim::SimWorld>> getOrCreate(const ChildOfSplit& child, const sim::SimOptions& options) {
    const int size = static_cast<int>(child.members.size());
    std::lock_guard<std::mutex> lock(mutex_);
    std::erase_if(worlds_, [](const auto& entry) { return entry.second.expired(); });
    const Key key{child.split, child.color};
    if (auto found = worlds_.find(key); found != worlds_.end()) {
      auto world = found->second.lock();
      if (world->worldSize() != size) {
        return internalError("prCommSplit: the simulated world of the child of color " + std::to_string(child.color) +
                             " has " + std::to_string(world->worldSize()) + " ranks, this member counts " +
                             std::to_string(size) + "; please report it");
      }
      return world;
    }
    PR_ASSIGN_OR_RETURN(std::shared_ptr<sim::SimWorld> world, sim::SimWorld::create(size, options));
    worlds_.emplace(key, world);
    return world;
  }

 private:
  using Key = std::pair<std::uint64_t, int>;
  std::mutex mutex_;
  std::map<Key, std::weak_ptr<sim::SimWorld>> worlds_;
};

ChildWorlds& childWorlds() {
  static ChildWorlds worlds;
  return worlds;
}

// The parent's options for the child: its seed derived from the parent's and the color (so a rerun with
// the same seed replays the children too), and the links among the members as the parent has them.
sim::SimOptions childOptions(const sim::SimWorld& parent, const ChildOfSplit& child) {
  sim::SimOptions options = parent.options();
  options.seed = sim::deriveSeed(parent.options().seed, static_cast<std::uint64_t>(child.color));
  const Topology& links = parent.options().topology;
  if (links.worldSize() == 0) return options;  // the default full mesh, of the child's size
  const auto size = static_cast<int>(child.members.size());
  Topology mine(size);
  for (int a = 0; a < size; ++a) {
    for (int b = 0; b < size; ++b) {
      if (a != b) mine.setLink(a, b, links.link(child.members[a], child.members[b]));
    }
  }
  mine.setDevice(links.device());
  options.topology = std::move(mine);
  return options;
}

}  // namespace

SplitPlacement simSplitPlacement(const std::shared_ptr<sim::SimWorld>& world) {
  std::weak_ptr<sim::SimWorld> weak = world;
  return [weak](const ChildOfSplit& child) -> StatusOr<ChildPlace> {
    auto parent = weak.lock();
    if (!parent) return unavailableError("prCommSplit: the simulated world of the parent communicator was destroyed");
    PR_ASSIGN_OR_RETURN(std::shared_ptr<sim::SimWorld> made,
                        childWorlds().getOrCreate(child, childOptions(*parent, child)));
    return ChildPlace{simTransports(made), made, made->bootstrap(child.rank), simSplitPlacement(made)};
  };
}

}  // namespace peerreduce::capi
