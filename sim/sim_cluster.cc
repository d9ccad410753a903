#include "sim_cluster.h"

#include <thread>

namespace peerreduce::sim {

StatusOr<std::unique_ptr<SimCluster>> SimCluster::create(int world_size, SimOptions options, Config config,
                                                         const TransportDecorator& decorate) {
  PR_ASSIGN_OR_RETURN(auto world, SimWorld::create(world_size, std::move(options)));
  std::vector<std::shared_ptr<Transport>> transports;
  for (int r = 0; r < world_size; ++r) {
    transports.push_back(decorate ? decorate(world, r, world->transport(r)) : world->transport(r));
  }
  auto cluster = std::unique_ptr<SimCluster>(new SimCluster());
  cluster->world_ = world;
  cluster->comms_.resize(static_cast<std::size_t>(world_size));
  std::vector<Status> results(static_cast<std::size_t>(world_size));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(world_size));
  // Joins whatever was started, also when starting a thread throws (destroying a joinable thread aborts).
  struct Joiner {
    std::vector<std::thread>& threads;
    ~Joiner() {
      for (auto& t : threads) {
        if (t.joinable()) t.join();
      }
    }
  } joiner{threads};
  for (int r = 0; r < world_size; ++r) {
    threads.emplace_back([&, r] {
      auto comm = Communicator::create(r, world_size, world->bootstrap(r), transports[static_cast<std::size_t>(r)], config);
      if (comm.isOk()) {
        cluster->comms_[static_cast<std::size_t>(r)] = std::move(comm).value();
      } else {
        results[static_cast<std::size_t>(r)] = comm.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& status : results) PR_RETURN_IF_ERROR(status);
  return cluster;
}

}  // namespace peerreduce::sim
