// MultiMachineSimCluster: a simulated multi-machine world (peerreduce/multi_machine_sim.h) with one
// MultiMachineCommunicator per rank, and a way to run an allreduce on every rank at once.
//
// A multi-machine allreduce waits on the host between its phases, so every rank needs its own thread
// for the whole operation: allreduce() runs each rank's allreduce and synchronize on a rank thread
// (sim/rank_threads.h) and returns every rank's status. Used by peerreduce-sim and the tests.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "peerreduce/multi_machine.h"
#include "peerreduce/multi_machine_sim.h"

namespace peerreduce::sim {

class MultiMachineSimCluster {
 public:
  // Collective creation of every rank's communicator with `config`; the first rank's error.
  static StatusOr<std::unique_ptr<MultiMachineSimCluster>> create(const MultiMachineSimOptions& options,
                                                                  const Config& config);

  int size() const { return world_->worldSize(); }
  MultiMachineSimWorld& world() { return *world_; }
  MultiMachineCommunicator& comm(int rank) { return *comms_[static_cast<std::size_t>(rank)]; }

  // Every rank's allreduce of send[r] into recv[r] (count elements), synchronized: each rank's status.
  std::vector<Status> allreduce(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                                DataType dtype, ReduceOp op, MachineStrategy strategy = MachineStrategy::kAuto);
  // Every rank's `call` (a reduce-scatter, an all-gather) followed by its synchronize, each on its rank
  // thread: each rank's status (the call's error, else synchronize's).
  std::vector<Status> run(const std::function<Status(MultiMachineCommunicator& comm, int rank)>& call);

 private:
  std::shared_ptr<MultiMachineSimWorld> world_;
  std::vector<std::unique_ptr<MultiMachineCommunicator>> comms_;
};

}  // namespace peerreduce::sim
