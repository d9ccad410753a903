/* peerreduce's MPI bootstrap from C: the ranks of a world are the processes of an MPI communicator.
 * Declared here, defined in the peerreduce_mpi library (link peerreduce::mpi); the rest of the C API is
 * peerreduce/peerreduce.h, which this header includes.
 *
 * The bootstrap duplicates `comm` (so the application's own MPI traffic never mixes with peerreduce's)
 * and polls nonblocking MPI calls on the calling thread against the communicator's timeout: a rank that
 * never arrives makes the others return prTimeout instead of hanging.
 *
 * Example:
 *   MPI_Init(&argc, &argv);
 *   prBootstrap_t bootstrap;
 *   prComm_t comm;
 *   int rank, size;
 *   MPI_Comm_rank(MPI_COMM_WORLD, &rank);
 *   MPI_Comm_size(MPI_COMM_WORLD, &size);
 *   if (prBootstrapFromMpi(MPI_COMM_WORLD, &bootstrap) != prSuccess ||
 *       prCommInitRank(&comm, size, rank, bootstrap, NULL) != prSuccess) {
 *     fprintf(stderr, "%s\n", prGetLastError());
 *     MPI_Abort(MPI_COMM_WORLD, 1);
 *   }
 */
#ifndef PEERREDUCE_PEERREDUCE_MPI_H_
#define PEERREDUCE_PEERREDUCE_MPI_H_

#include <mpi.h>

#include "peerreduce/peerreduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `comm` must be an intracommunicator of at most 64 processes; MPI must be initialised. *bootstrap is
 * NULL on failure. */
prResult_t prBootstrapFromMpi(MPI_Comm comm, prBootstrap_t* bootstrap) PEERREDUCE_NOEXCEPT;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PEERREDUCE_PEERREDUCE_MPI_H_ */
