/* Allreduce on GPUs from C, with the application's own rendezvous as the bootstrap.
 *
 * The ranks are threads of this process (one per rank, all on the visible GPUs: several ranks may share
 * one); their rendezvous is a shared table and a barrier, standing in for whatever a real launcher has
 * (a key-value store, torch.distributed, Ray). Each rank makes a bootstrap from its callbacks, creates
 * its communicator with prCommInitRank (the same call as on the simulator or under MPI), reduces a
 * buffer of device memory in place on a stream of its own and checks the result. (Ranks sharing a GPU
 * in one process each need their own stream: on the shared default stream their kernels would wait for
 * each other, and peerreduce refuses it.)
 *
 * Usage: gpu_callback_allreduce [ranks]   (default 2). Exit status 0 when every rank's result is right.
 */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peerreduce/peerreduce.h"

enum { kMaxRanks = 8, kCount = 1 << 16, kMaxBlock = 4096 };

/* The application's rendezvous: every rank writes its block into its slot, waits for all, copies all. */
typedef struct {
  pthread_barrier_t arrived;
  pthread_barrier_t copied;
  unsigned char slots[kMaxRanks][kMaxBlock];
  int ranks;
} Rendezvous;

typedef struct {
  Rendezvous* rendezvous;
  int rank;
  int failed;
} Rank;

static int allGather(void* context, const void* sendbuf, void* recvbuf, size_t bytes, size_t* gathered,
                     int64_t timeout_ms) {
  Rank* me = (Rank*)context;
  Rendezvous* r = me->rendezvous;
  (void)timeout_ms; /* a real rendezvous gives up after timeout_ms; threads of one process always arrive */
  if (bytes > kMaxBlock) return 1;
  memcpy(r->slots[me->rank], sendbuf, bytes);
  pthread_barrier_wait(&r->arrived);
  for (int i = 0; i < r->ranks; ++i) memcpy((unsigned char*)recvbuf + (size_t)i * bytes, r->slots[i], bytes);
  pthread_barrier_wait(&r->copied); /* nobody overwrites a slot before everyone copied it */
  *gathered = bytes * (size_t)r->ranks;
  return 0;
}

static void* runRank(void* argument) {
  Rank* me = (Rank*)argument;
  const int n = me->rendezvous->ranks;
  prBootstrapCallbacks_t callbacks = {allGather, NULL, me, "example rendezvous"};
  prBootstrap_t bootstrap = NULL;
  prComm_t comm = NULL;
  float* data = NULL;
  cudaStream_t stream = NULL;
  me->failed = 1;
  /* As with NCCL, the communicator uses the device current on the creating thread: one GPU per rank where
     there are enough, else ranks share them. */
  int devices = 1;
  cudaGetDeviceCount(&devices);
  cudaSetDevice(me->rank % (devices > 0 ? devices : 1));
  if (prBootstrapCreate(n, me->rank, &callbacks, &bootstrap) != prSuccess ||
      prCommInitRank(&comm, n, me->rank, bootstrap, NULL) != prSuccess) {
    fprintf(stderr, "rank %d: %s\n", me->rank, prGetLastError());
    if (bootstrap) prBootstrapDestroy(bootstrap);
    return NULL;
  }
  prBootstrapDestroy(bootstrap); /* the communicator keeps what it needs */
  float* host = (float*)malloc(kCount * sizeof(float));
  for (int i = 0; i < kCount; ++i) host[i] = (float)(me->rank + 1) * (float)(i % 100);
  /* The communicator chose this thread's device (its local rank modulo the visible GPUs). */
  /* Ranks sharing a GPU need a stream each (non-blocking: not ordered with the legacy default stream),
   * so the copies go on that stream too: a plain cudaMemcpy from pageable memory may return before its
   * data lands, and a kernel on a non-blocking stream would not wait for it. */
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
      cudaMalloc((void**)&data, kCount * sizeof(float)) != cudaSuccess ||
      cudaMemcpyAsync(data, host, kCount * sizeof(float), cudaMemcpyHostToDevice, stream) != cudaSuccess) {
    fprintf(stderr, "rank %d: device memory failed\n", me->rank);
  } else if (prAllReduce(data, data, kCount, prFloat32, prSum, comm, stream) != prSuccess ||
             prCommSynchronize(comm, stream) != prSuccess) {
    fprintf(stderr, "rank %d: %s\n", me->rank, prGetLastError());
  } else if (cudaMemcpyAsync(host, data, kCount * sizeof(float), cudaMemcpyDeviceToHost, stream) == cudaSuccess &&
             cudaStreamSynchronize(stream) == cudaSuccess) {
    const float ranks_sum = (float)(n * (n + 1) / 2);
    int wrong = 0;
    for (int i = 0; i < kCount; ++i) wrong += host[i] != ranks_sum * (float)(i % 100);
    me->failed = wrong != 0;
    printf("rank %d of %d: %s (%d wrong of %d)\n", me->rank, n, wrong ? "WRONG" : "ok", wrong, kCount);
  }
  if (stream != NULL) cudaStreamDestroy(stream);
  cudaFree(data);
  free(host);
  prCommDestroy(comm);
  return NULL;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 2;
  if (n < 1 || n > kMaxRanks) {
    fprintf(stderr, "usage: %s [ranks 1..%d]\n", argv[0], kMaxRanks);
    return 2;
  }
  Rendezvous rendezvous;
  rendezvous.ranks = n;
  pthread_barrier_init(&rendezvous.arrived, NULL, (unsigned)n);
  pthread_barrier_init(&rendezvous.copied, NULL, (unsigned)n);
  Rank ranks[kMaxRanks];
  pthread_t threads[kMaxRanks];
  for (int r = 0; r < n; ++r) {
    ranks[r] = (Rank){&rendezvous, r, 1};
    pthread_create(&threads[r], NULL, runRank, &ranks[r]);
  }
  int failed = 0;
  for (int r = 0; r < n; ++r) {
    pthread_join(threads[r], NULL);
    failed |= ranks[r].failed;
  }
  return failed;
}
