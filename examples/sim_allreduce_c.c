/* A sum allreduce of fp32 over a simulated world of 4 ranks with the C API, driven from one thread.
 * Every rank contributes rank + 1 in every element, so every element of the result must be 1+2+3+4. */
#include <stdio.h>

#include "peerreduce/peerreduce_sim.h"
#include "peerreduce/version.h"

enum { kRanks = 4, kCount = 1024 };

static float data[kRanks][kCount];

/* Prints what failed and why; returns nonzero when `result` is an error. */
static int failed(prResult_t result, const char* what) {
  if (result == prSuccess) return 0;
  fprintf(stderr, "%s failed (%s): %s\n", what, prGetErrorString(result), prGetLastError());
  return 1;
}

int main(void) {
  /* The library loaded must be the one the headers describe (a stale libpeerreduce.so on the path
   * would otherwise show up as a strange failure later). */
  int version = 0;
  if (failed(prGetVersion(&version), "prGetVersion")) return 1;
  if (version != PEERREDUCE_VERSION_CODE) {
    fprintf(stderr, "built against peerreduce %s (%d) but running version %d\n", PEERREDUCE_VERSION_STRING,
            PEERREDUCE_VERSION_CODE, version);
    return 1;
  }
  prSimWorld_t world;
  prComm_t comms[kRanks];
  if (failed(prSimWorldCreate(kRanks, 7, &world), "prSimWorldCreate")) return 1;
  /* NULL config: the defaults, with PEERREDUCE_* environment variables applied. */
  if (failed(prCommInitSimAll(world, NULL, comms), "prCommInitSimAll")) return 1;

  for (int r = 0; r < kRanks; ++r) {
    for (int i = 0; i < kCount; ++i) data[r][i] = (float)(r + 1);
    /* In place (send == recv). This only enqueues; prSimWorldRun below executes every rank's part. */
    if (failed(prAllReduce(data[r], data[r], kCount, prFloat32, prSum, comms[r], NULL), "prAllReduce")) return 1;
  }
  if (failed(prSimWorldRun(world), "prSimWorldRun")) return 1;

  const float expected = kRanks * (kRanks + 1) / 2.0f;
  int wrong = 0;
  for (int r = 0; r < kRanks; ++r) {
    for (int i = 0; i < kCount; ++i) wrong += data[r][i] != expected;
  }
  printf("allreduce of %d fp32 over %d simulated ranks: element 0 = %g (expected %g), %d wrong\n", kCount, kRanks,
         (double)data[0][0], (double)expected, wrong);

  /* Communicators first: the world must outlive them. */
  for (int r = 0; r < kRanks; ++r) {
    if (failed(prCommDestroy(comms[r]), "prCommDestroy")) return 1;
  }
  if (failed(prSimWorldDestroy(world), "prSimWorldDestroy")) return 1;
  return wrong == 0 ? 0 : 1;
}
