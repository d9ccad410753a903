#include "sim_cluster.h"

#include "rank_threads.h"

namespace peerreduce::sim {

StatusOr<std::unique_ptr<SimCluster>> SimCluster::create(int world_size, SimOptions options, Config config,
                                                         const TransportDecorator& decorate) {
  PR_ASSIGN_OR_RETURN(auto world, SimWorld::create(world_size, std::move(options)));
  std::vector<std::shared_ptr<Transport>> transports;
  for (int r = 0; r < world_size; ++r) {
    transports.push_back(decorate ? decorate(world, r, world->transport(r)) : world->transport(r));
  }
  return createWith(world, [&](int r) {
    return Communicator::create(r, world_size, world->bootstrap(r), transports[static_cast<std::size_t>(r)], config);
  });
}

StatusOr<std::unique_ptr<SimCluster>> SimCluster::createWith(std::shared_ptr<SimWorld> world,
                                                             const CommunicatorMaker& make) {
  const int n = world->worldSize();
  auto cluster = std::unique_ptr<SimCluster>(new SimCluster());
  cluster->world_ = std::move(world);
  cluster->comms_.resize(static_cast<std::size_t>(n));
  std::vector<Status> results(static_cast<std::size_t>(n));
  runOnRankThreads(n, [&](int r) {
    auto comm = make(r);
    if (comm.isOk()) {
      cluster->comms_[static_cast<std::size_t>(r)] = std::move(comm).value();
    } else {
      results[static_cast<std::size_t>(r)] = comm.status();
    }
  });
  for (const auto& status : results) PR_RETURN_IF_ERROR(status);
  return cluster;
}

}  // namespace peerreduce::sim
