/* Compiled as C11: proves peerreduce.h is valid C and that the API works from a C caller. */
#include <string.h>

#include "peerreduce/peerreduce_sim.h"

enum { kRanks = 2, kCount = 5 };

/* 0 when every check passes, otherwise the number of the first failing check. */
int runCHeaderChecks(void) {
  if (strcmp(prGetErrorString(prSuccess), "success") != 0) return 1;
  /* In C an enum is an int: a negative value is legal to pass and must be reported, not indexed. */
  if (strcmp(prGetErrorString((prResult_t)-1), "unknown result") != 0) return 2;

  int rank = -7;
  if (prCommRank(NULL, &rank) != prInvalidArgument || rank != -7) return 3;
  if (strstr(prGetLastError(), "comm") == NULL) return 4;

  prConfig_t config;
  if (prConfigInit(&config) != prSuccess) return 5;
  config.verify_plans = 0;
  /* Every setting by name, as the environment variable's text. */
  if (prConfigSet(&config, "PEERREDUCE_POOL_BYTES", "32M") != prSuccess) return 19;
  if (config.pool_bytes != (size_t)32 << 20) return 20;
  if (prConfigSet(&config, "PEERREDUCE_POOL_BYTES", "3M") != prInvalidArgument) return 21;
  char value[PR_CONFIG_LINK_MASK_BYTES];
  if (prConfigGet(&config, "PEERREDUCE_POOL_BYTES", value, sizeof(value)) != prSuccess) return 22;
  if (strcmp(value, "33554432") != 0) return 23;

  prSimWorld_t world = NULL;
  if (prSimWorldCreate(kRanks, 3, &world) != prSuccess || world == NULL) return 6;
  prComm_t comms[kRanks];
  if (prCommInitSimAll(world, &config, comms) != prSuccess) return 7;

  int32_t data[kRanks][kCount];
  for (int r = 0; r < kRanks; ++r) {
    for (int i = 0; i < kCount; ++i) data[r][i] = (r + 1) * (i - 2);
  }
  for (int r = 0; r < kRanks; ++r) {
    if (prCommEnableProfiling(comms[r], 16) != prSuccess) return 14;
  }
  for (int r = 0; r < kRanks; ++r) {
    if (prAllReduce(data[r], data[r], kCount, prInt32, prSum, comms[r], NULL) != prSuccess) return 8;
  }
  if (prSimWorldRun(world) != prSuccess) return 9;
  prProfileSummary_t summary;
  if (prCommProfileSummary(comms[0], &summary) != prSuccess || summary.timed != 1) return 15;
  for (int r = 0; r < kRanks; ++r) {
    for (int i = 0; i < kCount; ++i) {
      if (data[r][i] != 3 * (i - 2)) return 10; /* (1 + 2) * (i - 2) */
    }
  }
  /* A batch of two halves of each rank's data: every element doubles again (3 -> 2 * 3 per element). */
  for (int r = 0; r < kRanks; ++r) {
    prBatchItem_t items[2] = {{data[r], data[r], kCount / 2},
                              {data[r] + kCount / 2, data[r] + kCount / 2, kCount - kCount / 2}};
    if (prAllReduceBatch(items, 2, prInt32, prSum, comms[r], NULL) != prSuccess) return 16;
  }
  if (prSimWorldRun(world) != prSuccess) return 17;
  for (int r = 0; r < kRanks; ++r) {
    for (int i = 0; i < kCount; ++i) {
      if (data[r][i] != 6 * (i - 2)) return 18;
    }
  }
  /* The inspection and recovery types are valid C too. */
  prSelection_t selection;
  if (prCommExplainSelection(comms[0], kCount, prInt32, &selection) != prSuccess || selection.ncandidates < 1)
    return 19;
  if (prCommExplainCollective(comms[0], prCollBroadcast, kCount, prInt32, 1, &selection) != prSuccess) return 19;
  prPinnedStats_t pinned;
  if (prCommPinnedStats(comms[1], &pinned) != prSuccess || pinned.limit_bytes == 0) return 20;
  prFailureReport_t report;
  if (prCommFailureReport(comms[0], &report) != prSuccess || report.lost_ranks != 0 || report.dead_links[1] != 0) {
    return 21;
  }
  prBootstrap_t bootstrap = NULL;
  if (prSimWorldBootstrap(world, 0, &bootstrap) != prSuccess || prBootstrapDestroy(bootstrap) != prSuccess) return 22;
  for (int r = 0; r < kRanks; ++r) {
    int size = 0;
    if (prCommSize(comms[r], &size) != prSuccess || size != kRanks) return 11;
    if (prCommDestroy(comms[r]) != prSuccess) return 12;
  }
  if (prSimWorldDestroy(world) != prSuccess) return 13;
  return 0;
}
