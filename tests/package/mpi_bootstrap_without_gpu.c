/* The MPI bootstrap through the installed MPI library, on a machine without a GPU (CI): under
 * mpirun -np 2 each rank makes its bootstrap from MPI_COMM_WORLD and asks for a communicator on its GPU.
 * Creation must fail on every rank with the result named by argv[1] ("unavailable": a GPU build on a
 * machine without a GPU; "unsupported": a build without a GPU backend), collectively and with a
 * message, and leave no communicator; the bootstrap is then destroyed. Exit 0 only if all of that held. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "peerreduce/peerreduce_mpi.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* expected = argc > 1 ? argv[1] : "unavailable";
  int ok = 1;
  prBootstrap_t bootstrap = NULL;
  prResult_t made = prBootstrapFromMpi(MPI_COMM_WORLD, &bootstrap);
  if (made != prSuccess) {
    fprintf(stderr, "rank %d: prBootstrapFromMpi: %s: %s\n", rank, prGetErrorString(made), prGetLastError());
    ok = 0;
  } else {
    prComm_t comm = (prComm_t)&ok; /* must come back NULL */
    const prResult_t created = prCommInitRank(&comm, size, rank, bootstrap, NULL);
    if (created == prSuccess || strcmp(prGetErrorString(created), expected) != 0 || comm != NULL ||
        strlen(prGetLastError()) == 0) {
      fprintf(stderr, "rank %d: prCommInitRank without a GPU gave %s (%s), comm %s\n", rank, prGetErrorString(created),
              prGetLastError(), comm == NULL ? "NULL" : "set");
      ok = 0;
    } else {
      printf("rank %d of %d: %s, as expected: %s\n", rank, size, expected, prGetLastError());
    }
    if (prBootstrapDestroy(bootstrap) != prSuccess) ok = 0;
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
