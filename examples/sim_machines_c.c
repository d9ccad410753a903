/* A reduce-scatter and an all-gather across 2 simulated machines of 2 ranks each, with the C API. Calls
 * across machines wait on the host between their steps, so every rank runs on a thread of its own.
 * Rank r contributes r + 1 in every element; after the reduce-scatter every rank's block holds 1+2+3+4,
 * and the all-gather gives every rank every block. */
#include <pthread.h>
#include <stdio.h>

#include "peerreduce/peerreduce_sim.h"

enum { kMachines = 2, kRanksPerMachine = 2, kRanks = kMachines * kRanksPerMachine, kCount = 256 };

static prMultiComm_t comms[kRanks];
static int input[kRanks][kRanks * kCount];
static int block[kRanks][kCount];
static int gathered[kRanks][kRanks * kCount];
static prResult_t results[kRanks];

static void* rankMain(void* argument) {
  const int r = (int)(size_t)argument;
  for (int i = 0; i < kRanks * kCount; ++i) input[r][i] = r + 1;
  /* The cost model picks how each crosses machines (prStrategyAuto); both are complete after synchronize. */
  prResult_t s = prMultiReduceScatter(input[r], block[r], kCount, prInt32, prSum, prStrategyAuto, comms[r], NULL);
  if (s == prSuccess) s = prMultiAllGather(block[r], gathered[r], kCount, prInt32, prStrategyAuto, comms[r], NULL);
  if (s == prSuccess) s = prMultiCommSynchronize(comms[r], NULL);
  results[r] = s;
  return NULL;
}

static int failed(prResult_t result, const char* what) {
  if (result == prSuccess) return 0;
  fprintf(stderr, "%s failed (%s): %s\n", what, prGetErrorString(result), prGetLastError());
  return 1;
}

int main(void) {
  prMultiSimWorld_t world;
  if (failed(prMultiSimWorldCreate(kMachines, kRanksPerMachine, 7, &world), "prMultiSimWorldCreate")) return 1;
  if (failed(prMultiCommInitSimAll(world, NULL, comms), "prMultiCommInitSimAll")) return 1;
  pthread_t threads[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    if (pthread_create(&threads[r], NULL, rankMain, (void*)(size_t)r) != 0) return 1;
  }
  for (int r = 0; r < kRanks; ++r) pthread_join(threads[r], NULL);
  int wrong = 0;
  for (int r = 0; r < kRanks; ++r) {
    if (failed(results[r], "rank's reduce-scatter and all-gather")) ++wrong;
    for (int i = 0; i < kRanks * kCount; ++i) wrong += gathered[r][i] != kRanks * (kRanks + 1) / 2;
  }
  prMachineLayout_t layout;
  if (failed(prMultiCommLayout(comms[kRanks - 1], &layout), "prMultiCommLayout")) return 1;
  printf(
      "reduce-scatter and all-gather of %d int32 per rank across %d machines x %d ranks (last rank: machine %d, "
      "local rank %d): %d wrong\n",
      kCount, layout.machines, layout.ranks_per_machine, layout.machine, layout.local_rank, wrong);
  for (int r = 0; r < kRanks; ++r) {
    if (failed(prMultiCommDestroy(comms[r]), "prMultiCommDestroy")) return 1;
  }
  if (failed(prMultiSimWorldDestroy(world), "prMultiSimWorldDestroy")) return 1;
  return wrong == 0 ? 0 : 1;
}
