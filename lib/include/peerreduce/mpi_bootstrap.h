// The MPI bootstrap: ranks of a world are the processes of an MPI communicator (Open MPI).
//
// Built into the peerreduce_mpi library when MPI is found. The bootstrap duplicates the communicator
// it is given, so the application's own MPI traffic never mixes with peerreduce's. Collectives are
// nonblocking MPI calls polled against a deadline: a rank that never arrives makes the others return
// kTimeout instead of hanging (the duplicated communicator is then unusable; create a new bootstrap).
//
// Example:
//   MPI_Init(&argc, &argv);
//   auto bootstrap = peerreduce::createMpiBootstrap(MPI_COMM_WORLD).value();
//   // bootstrap->rank(), bootstrap->size() are the MPI rank and size
#pragma once

#include <mpi.h>

#include <memory>

#include "peerreduce/bootstrap.h"

namespace peerreduce {

// `comm` must be an intracommunicator of at most kMaxWorldSize (64) processes; MPI must be initialised.
StatusOr<std::shared_ptr<Bootstrap>> createMpiBootstrap(MPI_Comm comm);

}  // namespace peerreduce
