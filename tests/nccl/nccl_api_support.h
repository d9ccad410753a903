// What the tests of libpeerreduce_nccl.so share: the test double's recordings (reached with dlsym on the
// library the NCCL-compatible library loaded), ranks as threads, and communicators made through the
// exported API as an application makes them.
#pragma once

#include <nccl.h>

#include <functional>
#include <string>
#include <vector>

#include "nccl_test_double.h"

namespace peerreduce::nccl::testing {

// The double's own functions, from the copy libpeerreduce_nccl.so loaded.
class TestDouble {
 public:
  static TestDouble& get();
  void reset() const { reset_(); }
  void setResult(const std::string& function, ncclResult_t result) const { set_result_(function.c_str(), result); }
  void setAsyncError(ncclResult_t state) const { set_async_error_(state); }
  std::vector<NcclTestDoubleCall> calls() const;
  // The calls of `function`, in order (of the rank `rank` only, when given).
  std::vector<NcclTestDoubleCall> callsOf(const std::string& function, int rank = -2) const;

 private:
  TestDouble();
  void (*reset_)();
  void (*set_result_)(const char*, int);
  void (*set_async_error_)(int);
  size_t (*count_)();
  int (*call_at_)(size_t, NcclTestDoubleCall*);
};

// Runs body(rank) on `nranks` threads and joins them.
void onRanks(int nranks, const std::function<void(int rank)>& body);

// Communicators of `nranks` ranks made with ncclCommInitRank on a thread each (the settings are the
// environment's at the call); ASSERT-fails the calling test when any creation fails.
std::vector<ncclComm_t> makeComms(int nranks);
void destroyComms(const std::vector<ncclComm_t>& comms);

// An allreduce of each rank's rank + 1 on every communicator, one thread per rank: EXPECTs it taken
// (nothing reaches the double) and right.
void expectTakenSums(const std::vector<ncclComm_t>& comms);

}  // namespace peerreduce::nccl::testing
