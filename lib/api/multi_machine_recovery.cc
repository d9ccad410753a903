// Recovery across machines: the failure report in world ranks, the agreement's links, and which
// machines go on (peerreduce/multi_machine.h).
#include <algorithm>
#include <set>

#include "peerreduce/multi_machine.h"

namespace peerreduce {

Topology agreementTopology(const MachineLayout& layout) { return Topology::fullMesh(layout.world_size); }

StatusOr<MachineShrink> planMachineShrink(const MachineLayout& layout, const FailureDecision& decision) {
  const std::set<int> failed(decision.failed.begin(), decision.failed.end());
  std::vector<bool> keep(static_cast<std::size_t>(layout.machines), true);
  MachineShrink shrink;
  for (int m = 0; m < layout.machines; ++m) {
    for (int r : layout.ranks_of_machine[static_cast<std::size_t>(m)]) {
      if (keep[static_cast<std::size_t>(m)] && failed.count(r) != 0) {
        keep[static_cast<std::size_t>(m)] = false;
        shrink.dropped.push_back("machine '" + layout.machine_names[static_cast<std::size_t>(m)] + "': rank " +
                                 std::to_string(r) + " failed");
      }
    }
  }
  for (const auto& [a, b] : decision.dead_links) {
    if (a < 0 || b < 0 || a >= layout.world_size || b >= layout.world_size) {
      return invalidArgumentError("failure decision names a link " + std::to_string(a) + "-" + std::to_string(b) +
                                  " outside the world of " + std::to_string(layout.world_size));
    }
    const int ma = layout.machine_of_rank[static_cast<std::size_t>(a)];
    const int mb = layout.machine_of_rank[static_cast<std::size_t>(b)];
    const int leaves = std::max(ma, mb);
    if (ma == mb || !keep[static_cast<std::size_t>(ma)] || !keep[static_cast<std::size_t>(mb)]) continue;
    keep[static_cast<std::size_t>(leaves)] = false;
    shrink.dropped.push_back("machine '" + layout.machine_names[static_cast<std::size_t>(leaves)] +
                             "': its network link to machine '" +
                             layout.machine_names[static_cast<std::size_t>(std::min(ma, mb))] + "' is down");
  }
  for (int m = 0; m < layout.machines; ++m) {
    if (!keep[static_cast<std::size_t>(m)]) continue;
    shrink.machines.push_back(m);
    for (int r : layout.ranks_of_machine[static_cast<std::size_t>(m)]) shrink.survivors.push_back(r);
  }
  std::sort(shrink.survivors.begin(), shrink.survivors.end());
  if (shrink.machines.empty()) {
    std::string why;
    for (const auto& d : shrink.dropped) why += (why.empty() ? "" : "; ") + d;
    return unavailableError("no machine is left whole after the failures (" + why + ")");
  }
  return shrink;
}

}  // namespace peerreduce
