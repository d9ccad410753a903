#include "mpi/threaded_machine_world.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "peerreduce/mpi_bootstrap.h"

namespace peerreduce::mpi {
namespace {

// The world bootstrap of one rank: the blocks of its local index from every machine (over MPI), then
// those of every local index from the machine's threads (in process), put in world-rank order.
class AcrossThenWithinBootstrap final : public Bootstrap {
 public:
  AcrossThenWithinBootstrap(std::shared_ptr<Bootstrap> across, std::shared_ptr<Bootstrap> within)
      : across_(std::move(across)), within_(std::move(within)) {}

  int rank() const override { return across_->rank() * within_->size() + within_->rank(); }
  int size() const override { return across_->size() * within_->size(); }

  Status allGather(std::span<const std::byte> mine, std::span<std::byte> all,
                   std::chrono::milliseconds timeout) override {
    const auto machines = static_cast<std::size_t>(across_->size());
    const auto locals = static_cast<std::size_t>(within_->size());
    const std::size_t block = mine.size();
    if (all.size() != block * machines * locals) {
      return invalidArgumentError("world bootstrap allGather on rank " + std::to_string(rank()) + ": output holds " +
                                  std::to_string(all.size()) + " bytes, " + std::to_string(block * machines * locals) +
                                  " needed");
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<std::byte> of_my_index(block * machines);
    PR_RETURN_IF_ERROR(across_->allGather(mine, of_my_index, timeout));
    std::vector<std::byte> by_index(block * machines * locals);
    const auto left =
        std::max(std::chrono::milliseconds(1),
                 std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
    PR_RETURN_IF_ERROR(within_->allGather(of_my_index, by_index, left));
    for (std::size_t local = 0; local < locals; ++local) {
      for (std::size_t machine = 0; machine < machines; ++machine) {
        std::memcpy(all.data() + (machine * locals + local) * block,
                    by_index.data() + (local * machines + machine) * block, block);
      }
    }
    return Status::ok();
  }

 private:
  std::shared_ptr<Bootstrap> across_;
  std::shared_ptr<Bootstrap> within_;
};

}  // namespace

StatusOr<std::unique_ptr<ThreadedMachineWorld>> ThreadedMachineWorld::create(MPI_Comm machines, int ranks_per_machine,
                                                                             const MpiTransportOptions& options) {
  if (ranks_per_machine < 1 || ranks_per_machine > kMaxWorldSize) {
    return invalidArgumentError("ThreadedMachineWorld: " + std::to_string(ranks_per_machine) +
                                " ranks per machine; 1.." + std::to_string(kMaxWorldSize) + " are supported");
  }
  std::unique_ptr<ThreadedMachineWorld> world(new ThreadedMachineWorld());
  PR_ASSIGN_OR_RETURN(world->transports_, createMpiTransports(machines, ranks_per_machine, options));
  world->machine_ = world->transports_.front()->rank();
  world->machines_ = world->transports_.front()->worldSize();
  world->ranks_per_machine_ = ranks_per_machine;
  if (world->worldSize() > kMaxWorldSize) {
    return invalidArgumentError("ThreadedMachineWorld: " + std::to_string(world->machines_) + " machines of " +
                                std::to_string(ranks_per_machine) + " ranks exceed " + std::to_string(kMaxWorldSize) +
                                " ranks");
  }
  // Every bootstrap over MPI duplicates its transport's communicator: made here, in the same order on
  // every process, because duplicating is collective.
  std::vector<std::shared_ptr<Bootstrap>> across;
  for (const auto& transport : world->transports_) {
    PR_ASSIGN_OR_RETURN(auto network, createMpiBootstrap(transport->comm()));
    world->network_.push_back(std::move(network));
    PR_ASSIGN_OR_RETURN(auto world_across, createMpiBootstrap(transport->comm()));
    across.push_back(std::move(world_across));
  }
  PR_ASSIGN_OR_RETURN(auto within, createInProcessGroup(ranks_per_machine));
  PR_ASSIGN_OR_RETURN(world->machine_group_, createInProcessGroup(ranks_per_machine));
  for (int l = 0; l < ranks_per_machine; ++l) {
    world->world_.push_back(std::make_shared<AcrossThenWithinBootstrap>(across[static_cast<std::size_t>(l)],
                                                                        within[static_cast<std::size_t>(l)]));
  }
  return world;
}

MachineLinksFactory ThreadedMachineWorld::linksFactory(
    std::function<StatusOr<std::shared_ptr<Transport>>(int local)> machine_transport) const {
  return
      [this, machine_transport = std::move(machine_transport)](const MachineLayout& layout) -> StatusOr<MachineLinks> {
        if (layout.machines != machines_ || layout.ranks_per_machine != ranks_per_machine_ ||
            layout.machine != machine_ || layout.local_rank < 0 || layout.local_rank >= ranks_per_machine_ ||
            layout.rank != worldRank(layout.local_rank)) {
          return invalidArgumentError(
              "ThreadedMachineWorld: the agreed layout puts world rank " + std::to_string(layout.rank) +
              " on machine " + std::to_string(layout.machine) + " as local rank " + std::to_string(layout.local_rank) +
              " of " + std::to_string(layout.machines) + " machines x " + std::to_string(layout.ranks_per_machine) +
              ", but this process is machine " + std::to_string(machine_) + " of " + std::to_string(machines_) + " x " +
              std::to_string(ranks_per_machine_) + " (each process must be one machine, its threads its ranks)");
        }
        MachineLinks links;
        const int local = layout.local_rank;
        links.machine_bootstrap = machineBootstrap(local);
        PR_ASSIGN_OR_RETURN(links.machine_transport, machine_transport(local));
        links.network_bootstrap = networkBootstrap(local);
        links.network_transport = networkTransport(local);
        return links;
      };
}

}  // namespace peerreduce::mpi
