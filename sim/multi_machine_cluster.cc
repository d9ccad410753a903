// A simulated multi-machine world with its communicators: see multi_machine_cluster.h.
#include "multi_machine_cluster.h"

#include "rank_threads.h"

namespace peerreduce::sim {

StatusOr<std::unique_ptr<MultiMachineSimCluster>> MultiMachineSimCluster::create(const MultiMachineSimOptions& options,
                                                                                 const Config& config) {
  PR_ASSIGN_OR_RETURN(auto world, MultiMachineSimWorld::create(options));
  const int n = world->worldSize();
  std::vector<std::unique_ptr<MultiMachineCommunicator>> made(static_cast<std::size_t>(n));
  std::vector<Status> errors(static_cast<std::size_t>(n));
  const MachineLinksFactory factory = world->linksFactory();
  runOnRankThreads(n, [&](int r) {
    auto comm =
        MultiMachineCommunicator::create(r, n, world->worldBootstrap(r), factory, config, world->hostIdentity(r));
    if (comm.isOk()) {
      made[static_cast<std::size_t>(r)] = std::move(*comm);
    } else {
      errors[static_cast<std::size_t>(r)] = comm.status();
    }
  });
  auto cluster = std::unique_ptr<MultiMachineSimCluster>(new MultiMachineSimCluster());
  for (int r = 0; r < n; ++r) {
    const Status& error = errors[static_cast<std::size_t>(r)];
    if (!error.isOk()) return error.withContext("rank " + std::to_string(r));
    cluster->comms_.push_back(std::move(made[static_cast<std::size_t>(r)]));
  }
  cluster->world_ = std::move(world);
  return cluster;
}

std::vector<Status> MultiMachineSimCluster::allreduce(const std::vector<const void*>& send,
                                                      const std::vector<void*>& recv, std::size_t count, DataType dtype,
                                                      ReduceOp op, MachineStrategy strategy) {
  return run([&](MultiMachineCommunicator& comm, int r) {
    const auto i = static_cast<std::size_t>(r);
    return comm.allreduce(send[i], recv[i], count, dtype, op, nullptr, strategy);
  });
}

std::vector<Status> MultiMachineSimCluster::run(
    const std::function<Status(MultiMachineCommunicator& comm, int rank)>& call) {
  const int n = size();
  std::vector<Status> statuses(static_cast<std::size_t>(n));
  runOnRankThreads(n, [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    Status s = call(*comms_[i], r);
    // synchronize is collective on the simulator: every rank makes it, whatever its call returned.
    const Status synced = comms_[i]->synchronize();
    statuses[i] = s.isOk() ? synced : s;
  });
  return statuses;
}

}  // namespace peerreduce::sim
