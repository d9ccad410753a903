/* Allreduce on GPUs from C under mpirun: one process per rank, MPI as the bootstrap.
 *
 * Usage: mpirun -np 2 gpu_mpi_allreduce. Exit status 0 when this rank's result is right.
 */
#include <cuda_runtime.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "peerreduce/peerreduce_mpi.h"

enum { kCount = 1 << 20 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* As with NCCL, the communicator uses the device current when it is created: one GPU per rank (a
     machine's ranks are numbered consecutively under mpirun here). */
  int devices = 1;
  cudaGetDeviceCount(&devices);
  cudaSetDevice(rank % (devices > 0 ? devices : 1));
  prBootstrap_t bootstrap = NULL;
  prComm_t comm = NULL;
  if (prBootstrapFromMpi(MPI_COMM_WORLD, &bootstrap) != prSuccess ||
      prCommInitRank(&comm, size, rank, bootstrap, NULL) != prSuccess) {
    fprintf(stderr, "rank %d: %s\n", rank, prGetLastError());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  prBootstrapDestroy(bootstrap);
  float* host = (float*)malloc(kCount * sizeof(float));
  float* data = NULL;
  for (int i = 0; i < kCount; ++i) host[i] = (float)(rank + 1);
  cudaMalloc((void**)&data, kCount * sizeof(float));
  cudaMemcpy(data, host, kCount * sizeof(float), cudaMemcpyHostToDevice);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  int wrong = kCount;
  if (prAllReduce(data, data, kCount, prFloat32, prSum, comm, stream) == prSuccess &&
      prCommSynchronize(comm, stream) == prSuccess) {
    cudaMemcpy(host, data, kCount * sizeof(float), cudaMemcpyDeviceToHost);
    wrong = 0;
    for (int i = 0; i < kCount; ++i) wrong += host[i] != (float)(size * (size + 1) / 2);
  } else {
    fprintf(stderr, "rank %d: %s\n", rank, prGetLastError());
  }
  printf("rank %d of %d: %s\n", rank, size, wrong ? "WRONG" : "ok");
  cudaStreamDestroy(stream);
  cudaFree(data);
  free(host);
  prCommDestroy(comm);
  MPI_Finalize();
  return wrong != 0;
}
