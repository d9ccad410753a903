// Grouping ranks by machine: see machine_layout.h.
#include "api/machine_layout.h"

#include "bootstrap/host_identity.h"

namespace peerreduce {

StatusOr<MachineLayout> machineLayoutOf(const std::vector<std::string>& identity_of_rank, int rank) {
  const int n = static_cast<int>(identity_of_rank.size());
  if (n < 1 || rank < 0 || rank >= n) {
    return invalidArgumentError("machine layout of rank " + std::to_string(rank) + " in a world of " +
                                std::to_string(n) + " ranks");
  }
  MachineLayout layout;
  layout.world_size = n;
  layout.rank = rank;
  layout.machine_of_rank.assign(static_cast<std::size_t>(n), -1);
  layout.local_rank_of_rank.assign(static_cast<std::size_t>(n), -1);
  for (int r = 0; r < n; ++r) {  // O(n x machines): machines are numbered by their lowest rank
    const std::string& name = identity_of_rank[static_cast<std::size_t>(r)];
    int machine = -1;
    for (int m = 0; m < layout.machines && machine < 0; ++m) {
      if (layout.machine_names[static_cast<std::size_t>(m)] == name) machine = m;
    }
    if (machine < 0) {
      machine = layout.machines++;
      layout.machine_names.push_back(name);
      layout.ranks_of_machine.emplace_back();
    }
    auto& members = layout.ranks_of_machine[static_cast<std::size_t>(machine)];
    layout.machine_of_rank[static_cast<std::size_t>(r)] = machine;
    layout.local_rank_of_rank[static_cast<std::size_t>(r)] = static_cast<int>(members.size());
    members.push_back(r);
  }
  layout.ranks_per_machine = static_cast<int>(layout.ranks_of_machine[0].size());
  bool equal = true;
  for (const auto& members : layout.ranks_of_machine) {
    equal = equal && static_cast<int>(members.size()) == layout.ranks_per_machine;
  }
  if (!equal) {
    std::string counts;
    for (int m = 0; m < layout.machines; ++m) {
      counts += (m == 0 ? "" : ", ") + layout.machine_names[static_cast<std::size_t>(m)] + " has " +
                std::to_string(layout.ranks_of_machine[static_cast<std::size_t>(m)].size());
    }
    return unsupportedError(
        "machines hold different numbers of ranks (" + counts +
        "); a communicator that spans machines pairs local rank i of every machine between machines, so every "
        "machine needs the same number of ranks: start the same number of ranks per machine");
  }
  layout.machine = layout.machine_of_rank[static_cast<std::size_t>(rank)];
  layout.local_rank = layout.local_rank_of_rank[static_cast<std::size_t>(rank)];
  return layout;
}

StatusOr<MachineLayout> gatherMachineLayout(Bootstrap& bootstrap, const std::string& identity,
                                            std::chrono::milliseconds timeout) {
  PR_ASSIGN_OR_RETURN(const HostGroups groups, gatherHostGroups(bootstrap, identity, timeout));
  return machineLayoutOf(groups.identity_of_rank, bootstrap.rank());
}

}  // namespace peerreduce
