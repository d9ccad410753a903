// The MPI half of the C API (peerreduce/peerreduce_mpi.h): prBootstrapFromMpi. Built into the MPI
// library (libpeerreduce_mpi), so only applications that use MPI depend on MPI. It uses the public API
// only, so the same code links against the static library or libpeerreduce.so.
#include "peerreduce/c_bootstrap.h"
#include "peerreduce/mpi_bootstrap.h"
#include "peerreduce/peerreduce_mpi.h"

extern "C" {

prResult_t prBootstrapFromMpi(MPI_Comm comm, prBootstrap_t* bootstrap) noexcept {
  return peerreduce::publishCBootstrap(
      "prBootstrapFromMpi", [comm] { return peerreduce::createMpiBootstrap(comm); }, "MPI", bootstrap);
}

}  // extern "C"
