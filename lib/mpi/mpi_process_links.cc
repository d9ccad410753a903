#include "mpi/mpi_process_links.h"

#include <string>

#include "mpi/mpi_environment.h"
#include "peerreduce/mpi_bootstrap.h"

namespace peerreduce::mpi {
namespace {

// A split of `world` by `color`, ordered by `key`, with errors returned.
StatusOr<MPI_Comm> split(MPI_Comm world, int color, int key, const char* what, int rank) {
  MPI_Comm out = MPI_COMM_NULL;
  const int rc = MPI_Comm_split(world, color, key, &out);
  if (rc != MPI_SUCCESS) {
    return unavailableError(std::string("MPI_Comm_split (") + what + ") failed on world rank " + std::to_string(rank) +
                            ": " + mpiErrorText(rc));
  }
  MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN);
  return out;
}

// Frees a communicator when it goes out of scope (whatever made from it duplicated it first).
struct FreeComm {
  MPI_Comm comm = MPI_COMM_NULL;
  ~FreeComm() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

}  // namespace

MachineLinksFactory mpiProcessLinksFactory(MPI_Comm world, MachineTransportMaker machine_transport,
                                           MpiTransportOptions options) {
  return [world, machine_transport = std::move(machine_transport),
          options = std::move(options)](const MachineLayout& layout) -> StatusOr<MachineLinks> {
    PR_RETURN_IF_ERROR(checkThreadLevelFor(1));
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    if (layout.rank != rank || layout.world_size != size) {
      return invalidArgumentError("MPI links: world rank " + std::to_string(layout.rank) + " of " +
                                  std::to_string(layout.world_size) + " is MPI rank " + std::to_string(rank) + " of " +
                                  std::to_string(size) + "; with one process per rank they must be the same");
    }
    FreeComm machine;
    FreeComm network;
    PR_ASSIGN_OR_RETURN(machine.comm, split(world, layout.machine, layout.local_rank, "by machine", rank));
    PR_ASSIGN_OR_RETURN(network.comm, split(world, layout.local_rank, layout.machine, "by local rank", rank));
    MachineLinks links;
    PR_ASSIGN_OR_RETURN(links.machine_bootstrap, createMpiBootstrap(machine.comm));
    PR_ASSIGN_OR_RETURN(auto transports, createMpiTransports(network.comm, 1, options));
    PR_ASSIGN_OR_RETURN(links.network_bootstrap, createMpiBootstrap(transports.front()->comm()));
    links.network_transport = transports.front();
    PR_ASSIGN_OR_RETURN(links.machine_transport, machine_transport(layout, machine.comm, links.machine_bootstrap));
    return links;
  };
}

}  // namespace peerreduce::mpi
