// The test double's own functions (nccl_test_double.cc), which tests reach with dlsym on the library
// libpeerreduce_nccl.so loaded: what was forwarded to it, and which result each function returns.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { kNcclTestDoubleMaxArgs = 10 };
// comm_rank of a call on a handle that is not a live communicator of the double.
enum { kNcclTestDoubleUnknownComm = -3 };

typedef struct {
  char function[40];  // "ncclAllReduce"
  int comm_rank;      // the rank of the double's communicator it was called on; -1 for none
  int nargs;
  uint64_t args[kNcclTestDoubleMaxArgs];  // the other arguments in order: pointers, counts and enums as numbers
} NcclTestDoubleCall;

// What the double's ncclGetErrorString and ncclGetLastError return.
#define kNcclTestDoubleErrorString "nccl test double: error string"
#define kNcclTestDoubleLastError "nccl test double: last error"

// Forgets every recorded call and forced result.
void ncclTestDoubleReset(void);
// From now on `function` returns `result` (ncclSuccess: its own result again).
void ncclTestDoubleSetResult(const char* function, int result);
// What ncclCommGetAsyncError reports from now on (ncclSuccess after a reset): ncclInProgress for a
// communicator still being created, an error for one that failed.
void ncclTestDoubleSetAsyncError(int state);
size_t ncclTestDoubleCallCount(void);
// Copies call `index` (0 the oldest); 0 when there is no such call.
int ncclTestDoubleCallAt(size_t index, NcclTestDoubleCall* call);

#ifdef __cplusplus
}
#endif
