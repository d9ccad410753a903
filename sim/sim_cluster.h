// SimCluster: a simulated world with one Communicator per rank, ready to allreduce.
//
// Creation is collective, so it runs each rank's Communicator::create on its own thread
// (runOnRankThreads) and waits for them; after that one thread can drive every rank: call allreduce on each
// communicator (they only enqueue), then runUntilIdle(). Used by peerreduce-sim, the benchmarks and the in-process test
// world.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "peerreduce/communicator.h"
#include "peerreduce/simulator.h"

namespace peerreduce::sim {

class SimCluster {
 public:
  // Wraps rank r's transport before its communicator is created (the fault injector, say). Called
  // for every rank on the creating thread, before any rank starts.
  using TransportDecorator = std::function<std::shared_ptr<Transport>(const std::shared_ptr<SimWorld>& world, int rank,
                                                                      std::shared_ptr<Transport> transport)>;
  static StatusOr<std::unique_ptr<SimCluster>> create(int world_size, SimOptions options, Config config,
                                                      const TransportDecorator& decorate = nullptr);

  // A cluster over `world` whose communicators `make(rank)` creates, collectively: one rank thread
  // each (Communicator::create with other arguments, shrinkCommunicator, ...). The first rank error.
  using CommunicatorMaker = std::function<StatusOr<std::unique_ptr<Communicator>>(int rank)>;
  static StatusOr<std::unique_ptr<SimCluster>> createWith(std::shared_ptr<SimWorld> world,
                                                          const CommunicatorMaker& make);

  int size() const { return world_->worldSize(); }
  Communicator& comm(int rank) { return *comms_[static_cast<std::size_t>(rank)]; }
  SimWorld& world() { return *world_; }
  std::shared_ptr<SimWorld> worldPtr() { return world_; }

  // Runs what every rank enqueued; the first rank error, if any.
  Status runUntilIdle() { return world_->runUntilIdle(); }

 private:
  std::shared_ptr<SimWorld> world_;
  std::vector<std::unique_ptr<Communicator>> comms_;
};

}  // namespace peerreduce::sim
