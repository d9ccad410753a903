// ThreadedMachineWorld: the MPI side of a world that spans machines when each process is one machine
// and runs that machine's ranks on threads (one thread per GPU), the processes connected by MPI.
//
// World rank = machine * K + local rank, where the machine is the process's rank in the `machines`
// communicator and K the ranks each machine runs. Per local rank it holds:
//   - the network world's MpiTransport (createMpiTransports: one per local rank, each on its own
//     communicator) and an MPI bootstrap over the same machines;
//   - the world bootstrap of its world rank: an all-gather across machines over MPI (among the ranks of
//     its local index), then among the machine's threads (in-process), reordered by world rank;
//   - a bootstrap among the machine's threads, for the machine world.
// linksFactory() is the seam of peerreduce/multi_machine.h: it hands each rank these, with the machine
// world's transport from the caller (a GPU transport, or the simulator's in tests).
//
// Made once per process on one thread (collective over `machines`: every process calls it with the same
// K); then each rank's thread takes its own pieces. Thread safety: the getters may be called from any
// thread; each bootstrap and transport is used by its rank's thread.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <vector>

#include "mpi/mpi_transport.h"
#include "peerreduce/bootstrap.h"
#include "peerreduce/multi_machine.h"

namespace peerreduce::mpi {

class ThreadedMachineWorld {
 public:
  // kUnsupported when MPI's thread level is below MPI_THREAD_MULTIPLE for K > 1; kInvalidArgument for K
  // outside 1..kMaxWorldSize or a world of more than kMaxWorldSize ranks.
  static StatusOr<std::unique_ptr<ThreadedMachineWorld>> create(MPI_Comm machines, int ranks_per_machine,
                                                                const MpiTransportOptions& options = {});

  int machine() const { return machine_; }
  int machines() const { return machines_; }
  int ranksPerMachine() const { return ranks_per_machine_; }
  int worldSize() const { return machines_ * ranks_per_machine_; }
  int worldRank(int local) const { return machine_ * ranks_per_machine_ + local; }

  std::shared_ptr<Bootstrap> worldBootstrap(int local) const { return world_[static_cast<std::size_t>(local)]; }
  std::shared_ptr<Bootstrap> machineBootstrap(int local) const {
    return machine_group_[static_cast<std::size_t>(local)];
  }
  std::shared_ptr<Bootstrap> networkBootstrap(int local) const { return network_[static_cast<std::size_t>(local)]; }
  std::shared_ptr<MpiTransport> networkTransport(int local) const {
    return transports_[static_cast<std::size_t>(local)];
  }

  // The links of each rank: the network half from here, the machine world's transport from
  // machine_transport(local rank). kInvalidArgument when the agreed layout does not put the rank where
  // this world does (another machine, another local rank, other machine sizes).
  MachineLinksFactory linksFactory(
      std::function<StatusOr<std::shared_ptr<Transport>>(int local)> machine_transport) const;

 private:
  ThreadedMachineWorld() = default;
  int machine_ = 0;
  int machines_ = 1;
  int ranks_per_machine_ = 1;
  std::vector<std::shared_ptr<MpiTransport>> transports_;
  std::vector<std::shared_ptr<Bootstrap>> network_;
  std::vector<std::shared_ptr<Bootstrap>> world_;
  std::vector<std::shared_ptr<Bootstrap>> machine_group_;
};

}  // namespace peerreduce::mpi
