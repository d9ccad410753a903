#include "machine_world.h"

#include <string>

#include "mpi/mpi_process_links.h"
#include "peerreduce/gpu.h"
#include "peerreduce/mpi_bootstrap.h"

namespace peerreduce::bench {

StatusOr<std::unique_ptr<MultiMachineCommunicator>> createMachines(MPI_Comm world, int rank, int size, int machines,
                                                                   int device, const Config& config) {
  if (machines < 1 || machines > size) {
    return invalidArgumentError(std::to_string(size) + " ranks cannot play " + std::to_string(machines) + " machines");
  }
  PR_ASSIGN_OR_RETURN(auto world_bootstrap, createMpiBootstrap(world));
  const auto factory = mpi::mpiProcessLinksFactory(
      world, [device](const MachineLayout& layout, MPI_Comm, const std::shared_ptr<Bootstrap>&) {
        GpuTransportOptions options;
        options.device = device;  // one GPU per process, as mpirun places them on one host
        options.local_rank = layout.local_rank;
        return createGpuTransport(layout.local_rank, layout.ranks_per_machine, options);
      });
  // Ranks in order, ceil(size / machines) a machine: a world that does not split evenly gives the last
  // machine fewer, which the communicator refuses (kUnsupported naming the machines and their counts).
  const int per_machine = (size + machines - 1) / machines;
  return MultiMachineCommunicator::create(rank, size, world_bootstrap, factory, config,
                                          "machine-" + std::to_string(rank / per_machine));
}

}  // namespace peerreduce::bench
