// libnccl_test_double.so: a TEST DOUBLE of NCCL for the NCCL-compatible library's tests. It is not NCCL and
// moves no device memory. It exports NCCL's C API with nccl.h's declarations and:
// - records every call it receives (function, the communicator's rank, the arguments), so a test can check
//   what libpeerreduce_nccl.so forwarded and with which arguments;
// - returns, per function, the result a test asked for (ncclTestDoubleSetResult), so a test can check that
//   a forwarded call's own result comes back unchanged;
// - makes communicators of ranks that are threads of one process, and really runs ncclAllGather (and the
//   gather behind ncclCommSplit) over host memory, bounded in time: the shadow bootstrap of peerreduce's
//   side runs over it. Every other collective is only recorded;
// - knows its live communicators, as NCCL checks its handles: a call on a handle that is not one of them
//   (NULL, destroyed, or a pointer of someone else's) is recorded with kNcclTestDoubleUnknownComm and
//   refused with ncclInvalidArgument, without touching it;
// - like the real NCCL, calls one of its own exported functions from inside: ncclCommSplit gathers the
//   ranks' colors and keys with ncclAllGather through the process's symbol table, which finds the
//   preloaded library's ncclAllGather first.
// Built three times: whole; without ncclAllReduce (NCCL_TEST_DOUBLE_WITHOUT_ALLREDUCE), a library that is
// not NCCL, refused at the first call; and without ncclCommSplit (NCCL_TEST_DOUBLE_WITHOUT_SPLIT), an NCCL
// older than 2.18, loaded, whose missing function is refused when called.
#include "nccl_test_double.h"

#include <dlfcn.h>
#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

// 30 s: far longer than any test's ranks take to reach the same collective, short enough that a test that
// leaves a rank behind fails instead of hanging.
constexpr std::chrono::seconds kRendezvousTimeout{30};

struct Group {
  explicit Group(int n)
      : size(n),
        sends(static_cast<std::size_t>(n)),
        bytes(static_cast<std::size_t>(n)),
        recvs(static_cast<std::size_t>(n)) {}
  const int size;
  std::mutex mutex;
  std::condition_variable cv;
  std::uint64_t generation = 0;
  int arrived = 0;
  bool broken = false;
  bool lengths_differ = false;
  std::vector<const void*> sends;
  std::vector<std::size_t> bytes;
  std::vector<void*> recvs;
};

struct DoubleComm {
  std::shared_ptr<Group> group;
  std::string group_key;
  int rank = 0;
  int device = 0;
  // Splits this rank made of the communicator: every rank makes the same ones, so the count numbers the
  // groups they make alike on every rank.
  std::uint64_t splits = 0;
};

struct State {
  std::mutex mutex;
  std::vector<NcclTestDoubleCall> calls;
  std::map<std::string, int> results;  // forced results by function name
  std::map<std::string, std::shared_ptr<Group>> groups;
  std::uint64_t unique_ids = 0;
  int created_ops = 0;
  ncclResult_t async_state = ncclSuccess;  // what ncclCommGetAsyncError reports
  std::set<const void*> live;              // the communicators made and not yet destroyed
};

State& state() {
  static State* s = new State();  // never destroyed: calls may come from static destructors
  return *s;
}

bool isLive(const void* comm) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.live.count(comm) != 0;
}

// A new communicator, live until ncclCommDestroy or ncclCommAbort.
ncclComm_t made(DoubleComm* comm) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.live.insert(comm);
  return reinterpret_cast<ncclComm_t>(comm);
}

// Whether `comm` was live; it is not afterwards.
bool retire(ncclComm_t comm) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.live.erase(comm) != 0;
}

// Read under the lock that ncclCommDestroy and ncclCommAbort retire a communicator with, so a call
// recorded while another thread ends the communicator (a watchdog's abort) never reads a freed one.
int rankOf(ncclComm_t comm) {
  if (comm == nullptr) return -1;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.live.count(comm) != 0 ? reinterpret_cast<DoubleComm*>(comm)->rank : kNcclTestDoubleUnknownComm;
}

template <typename T>
std::uint64_t value(T argument) {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<std::uintptr_t>(argument);
  } else {
    return static_cast<std::uint64_t>(argument);
  }
}

// Records the call and returns the result the test set for the function (ncclSuccess by default).
template <typename... Args>
ncclResult_t record(const char* function, ncclComm_t comm, Args... args) {
  State& s = state();
  NcclTestDoubleCall call{};
  std::strncpy(call.function, function, sizeof(call.function) - 1);
  call.comm_rank = rankOf(comm);
  const std::uint64_t values[] = {value(args)..., 0};
  call.nargs = static_cast<int>(sizeof...(Args));
  for (int i = 0; i < call.nargs && i < kNcclTestDoubleMaxArgs; ++i) call.args[i] = values[i];
  std::lock_guard<std::mutex> lock(s.mutex);
  s.calls.push_back(call);
  auto forced = s.results.find(function);
  return forced == s.results.end() ? ncclSuccess : static_cast<ncclResult_t>(forced->second);
}

// record() for a function on a communicator: one that is not live is refused, as NCCL refuses it.
template <typename... Args>
ncclResult_t recordOn(const char* function, ncclComm_t comm, Args... args) {
  const ncclResult_t result = record(function, comm, args...);
  return isLive(comm) ? result : ncclInvalidArgument;
}

std::size_t elementBytes(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      return 0;
  }
}

// Every rank's `bytes` from `send` into every rank's `recv` (rank r's at r x bytes), once all have come.
ncclResult_t gather(DoubleComm& comm, const void* send, void* recv, std::size_t bytes) {
  Group& group = *comm.group;
  std::unique_lock<std::mutex> lock(group.mutex);
  if (group.broken) return ncclSystemError;
  const std::uint64_t mine = group.generation;
  const auto r = static_cast<std::size_t>(comm.rank);
  group.sends[r] = send;
  group.bytes[r] = bytes;
  group.recvs[r] = recv;
  if (++group.arrived == group.size) {
    group.lengths_differ = false;
    for (std::size_t q = 0; q < group.bytes.size(); ++q) group.lengths_differ |= group.bytes[q] != bytes;
    if (!group.lengths_differ) {
      for (std::size_t to = 0; to < group.recvs.size(); ++to) {
        for (std::size_t from = 0; from < group.sends.size(); ++from) {
          if (bytes > 0) std::memmove(static_cast<char*>(group.recvs[to]) + from * bytes, group.sends[from], bytes);
        }
      }
    }
    group.arrived = 0;
    ++group.generation;
    group.cv.notify_all();
    return group.lengths_differ ? ncclInvalidArgument : ncclSuccess;
  }
  if (!group.cv.wait_for(lock, kRendezvousTimeout, [&] { return group.generation != mine || group.broken; })) {
    group.broken = true;
    group.cv.notify_all();
    return ncclSystemError;
  }
  if (group.broken) return ncclSystemError;
  return group.lengths_differ ? ncclInvalidArgument : ncclSuccess;
}

std::string keyOf(const ncclUniqueId& id) { return std::string(id.internal, sizeof(id.internal)); }

ncclResult_t join(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank) {
  if (comm == nullptr || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
  State& s = state();
  std::shared_ptr<Group> group;
  const std::string key = keyOf(id);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto& slot = s.groups[key];
    if (slot == nullptr) slot = std::make_shared<Group>(nranks);
    if (slot->size != nranks) return ncclInvalidArgument;
    group = slot;
  }
  *comm = made(new DoubleComm{group, key, rank, rank, 0});
  return ncclSuccess;
}

std::shared_ptr<Group> groupFor(const std::string& key, int size) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto& slot = s.groups[key];
  if (slot == nullptr) slot = std::make_shared<Group>(size);
  return slot;
}

#ifndef NCCL_TEST_DOUBLE_WITHOUT_SPLIT
// ncclAllGather as the process's symbol table finds it: with libpeerreduce_nccl preloaded (or linked before
// this library), that library's; loaded alone, this one's.
using AllGatherFunction = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
AllGatherFunction dynamicAllGather() {
  void* found = dlsym(RTLD_DEFAULT, "ncclAllGather");
  return found != nullptr ? reinterpret_cast<AllGatherFunction>(found) : &ncclAllGather;
}
#endif

}  // namespace

extern "C" {

void ncclTestDoubleReset() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.calls.clear();
  s.results.clear();
  s.async_state = ncclSuccess;
}

void ncclTestDoubleSetResult(const char* function, int result) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (result == ncclSuccess) {
    s.results.erase(function);
  } else {
    s.results[function] = result;
  }
}

void ncclTestDoubleSetAsyncError(int async_state) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.async_state = static_cast<ncclResult_t>(async_state);
}

size_t ncclTestDoubleCallCount() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.calls.size();
}

int ncclTestDoubleCallAt(size_t index, NcclTestDoubleCall* call) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (index >= s.calls.size() || call == nullptr) return 0;
  *call = s.calls[index];
  return 1;
}

ncclResult_t ncclGetVersion(int* version) {
  const ncclResult_t result = record("ncclGetVersion", nullptr, version);
  if (version != nullptr) *version = NCCL_VERSION_CODE;
  return result;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  const ncclResult_t result = record("ncclGetUniqueId", nullptr, uniqueId);
  if (uniqueId == nullptr) return ncclInvalidArgument;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::memset(uniqueId, 0, sizeof(*uniqueId));
  const std::uint64_t number = ++s.unique_ids;
  std::memcpy(uniqueId->internal, "double", 6);
  std::memcpy(uniqueId->internal + 8, &number, sizeof(number));
  return result;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  const ncclResult_t result = record("ncclCommInitRank", nullptr, comm, nranks, rank);
  if (result != ncclSuccess) return result;
  return join(comm, nranks, commId, rank);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  const ncclResult_t result = record("ncclCommInitRankConfig", nullptr, comm, nranks, rank, config);
  // ncclInProgress is what a non-blocking creation returns: the communicator exists all the same.
  if (result != ncclSuccess && result != ncclInProgress) return result;
  const ncclResult_t joined = join(comm, nranks, commId, rank);
  return joined != ncclSuccess ? joined : result;
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  const ncclResult_t result = record("ncclCommInitAll", nullptr, comm, ndev, devlist);
  if (result != ncclSuccess) return result;
  if (comm == nullptr || ndev < 1) return ncclInvalidArgument;
  State& s = state();
  std::string key;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    key = "all " + std::to_string(++s.unique_ids);
  }
  auto group = std::make_shared<Group>(ndev);
  for (int i = 0; i < ndev; ++i) {
    comm[i] = made(new DoubleComm{group, key, i, devlist != nullptr ? devlist[i] : i, 0});
  }
  return ncclSuccess;
}

#ifndef NCCL_TEST_DOUBLE_WITHOUT_SPLIT
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  const ncclResult_t result = recordOn("ncclCommSplit", comm, color, key, newcomm, config);
  if (result != ncclSuccess) return result;
  if (newcomm == nullptr) return ncclInvalidArgument;
  DoubleComm& parent = *reinterpret_cast<DoubleComm*>(comm);
  const int size = parent.group->size;
  const std::int32_t mine[2] = {color, key};
  std::vector<std::int32_t> all(2 * static_cast<std::size_t>(size));
  // Through the symbol table, as NCCL's own calls to its exported functions go (this file's header says why).
  const ncclResult_t gathered = dynamicAllGather()(mine, all.data(), 2, ncclInt32, comm, nullptr);
  if (gathered != ncclSuccess) return gathered;
  *newcomm = nullptr;
  if (color == NCCL_SPLIT_NOCOLOR) {
    ++parent.splits;
    return ncclSuccess;
  }
  // New ranks by (key, old rank), among the ranks of the same color.
  int new_rank = 0;
  int new_size = 0;
  for (int r = 0; r < size; ++r) {
    const std::int32_t their_color = all[2 * static_cast<std::size_t>(r)];
    const std::int32_t their_key = all[2 * static_cast<std::size_t>(r) + 1];
    if (their_color != color) continue;
    ++new_size;
    if (their_key < key || (their_key == key && r < parent.rank)) ++new_rank;
  }
  const std::uint64_t split = parent.splits++;
  const std::string group_key =
      parent.group_key + " split " + std::to_string(split) + " color " + std::to_string(color);
  *newcomm = made(new DoubleComm{groupFor(group_key, new_size), group_key, new_rank, parent.device, 0});
  return ncclSuccess;
}
#endif

ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  const ncclResult_t result =
      record("ncclCommInitRankScalable", nullptr, newcomm, nranks, myrank, nId, commIds, config);
  if (result != ncclSuccess) return result;
  if (commIds == nullptr || nId < 1) return ncclInvalidArgument;
  return join(newcomm, nranks, commIds[0], myrank);
}

// The ranks not excluded make a communicator of their own, numbered in their old order (the excluded ranks
// do not call it, so nothing is gathered: every caller computes the same from the same list).
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags) {
  const ncclResult_t result =
      recordOn("ncclCommShrink", comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  if (result != ncclSuccess) return result;
  if (newcomm == nullptr || excludeRanksCount < 0 || (excludeRanksCount > 0 && excludeRanksList == nullptr)) {
    return ncclInvalidArgument;
  }
  DoubleComm& parent = *reinterpret_cast<DoubleComm*>(comm);
  int new_rank = parent.rank;
  std::string excluded;
  for (int i = 0; i < excludeRanksCount; ++i) {
    if (excludeRanksList[i] == parent.rank) return ncclInvalidArgument;
    if (excludeRanksList[i] < parent.rank) --new_rank;
    excluded += " " + std::to_string(excludeRanksList[i]);
  }
  const std::string group_key = parent.group_key + " shrink " + std::to_string(parent.splits++) + " without" + excluded;
  *newcomm = made(new DoubleComm{groupFor(group_key, parent.group->size - excludeRanksCount), group_key, new_rank,
                                 parent.device, 0});
  return ncclSuccess;
}

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) { return recordOn("ncclCommRevoke", comm, revokeFlags); }

// Forwarded untouched by libpeerreduce_nccl; handles_test.cc also calls them here directly, standing for a
// function the library does not export.
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  const ncclResult_t result = recordOn("ncclCommWindowRegister", comm, buff, size, win, winFlags);
  if (result == ncclSuccess && win != nullptr) *win = reinterpret_cast<ncclWindow_t>(buff);
  return result;
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return recordOn("ncclCommWindowDeregister", comm, win);
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) { return recordOn("ncclCommFinalize", comm); }

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  const ncclResult_t result = record("ncclCommDestroy", comm);
  if (!retire(comm)) return ncclInvalidArgument;
  delete reinterpret_cast<DoubleComm*>(comm);
  return result;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  const ncclResult_t result = record("ncclCommAbort", comm);
  if (!retire(comm)) return ncclInvalidArgument;
  delete reinterpret_cast<DoubleComm*>(comm);
  return result;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  const ncclResult_t result = recordOn("ncclCommGetAsyncError", comm, asyncError);
  if (!isLive(comm)) return result;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (asyncError != nullptr) *asyncError = s.async_state;
  return result;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  const ncclResult_t result = recordOn("ncclCommCount", comm, count);
  if (isLive(comm) && count != nullptr) *count = reinterpret_cast<DoubleComm*>(comm)->group->size;
  return result;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  const ncclResult_t result = recordOn("ncclCommCuDevice", comm, device);
  if (isLive(comm) && device != nullptr) *device = reinterpret_cast<DoubleComm*>(comm)->device;
  return result;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  const ncclResult_t result = recordOn("ncclCommUserRank", comm, rank);
  if (isLive(comm) && rank != nullptr) *rank = reinterpret_cast<DoubleComm*>(comm)->rank;
  return result;
}

const char* ncclGetErrorString(ncclResult_t result) {
  record("ncclGetErrorString", nullptr, static_cast<int>(result));
  return kNcclTestDoubleErrorString;
}

const char* ncclGetLastError(ncclComm_t comm) {
  record("ncclGetLastError", comm);
  return kNcclTestDoubleLastError;
}

#ifndef NCCL_TEST_DOUBLE_WITHOUT_ALLREDUCE
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  return recordOn("ncclAllReduce", comm, sendbuff, recvbuff, count, static_cast<int>(datatype), static_cast<int>(op),
                  stream);
}
#endif

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return recordOn("ncclReduceScatter", comm, sendbuff, recvbuff, recvcount, static_cast<int>(datatype),
                  static_cast<int>(op), stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  const ncclResult_t result =
      recordOn("ncclAllGather", comm, sendbuff, recvbuff, sendcount, static_cast<int>(datatype), stream);
  if (result != ncclSuccess) return result;
  return gather(*reinterpret_cast<DoubleComm*>(comm), sendbuff, recvbuff, sendcount * elementBytes(datatype));
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  return recordOn("ncclBroadcast", comm, sendbuff, recvbuff, count, static_cast<int>(datatype), root, stream);
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return recordOn("ncclBcast", comm, buff, count, static_cast<int>(datatype), root, stream);
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
  return recordOn("ncclAlltoAll", comm, sendbuff, recvbuff, count, static_cast<int>(datatype), stream);
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return recordOn("ncclGather", comm, sendbuff, recvbuff, count, static_cast<int>(datatype), root, stream);
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return recordOn("ncclScatter", comm, sendbuff, recvbuff, count, static_cast<int>(datatype), root, stream);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  return recordOn("ncclReduce", comm, sendbuff, recvbuff, count, static_cast<int>(datatype), static_cast<int>(op), root,
                  stream);
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return recordOn("ncclSend", comm, sendbuff, count, static_cast<int>(datatype), peer, stream);
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return recordOn("ncclRecv", comm, recvbuff, count, static_cast<int>(datatype), peer, stream);
}

ncclResult_t ncclGroupStart() { return record("ncclGroupStart", nullptr); }
ncclResult_t ncclGroupEnd() { return record("ncclGroupEnd", nullptr); }
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  const ncclResult_t result = record("ncclGroupSimulateEnd", nullptr, simInfo);
  if (result == ncclSuccess && simInfo != nullptr) simInfo->estimatedTime = 1.0f;
  return result;
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  const ncclResult_t result =
      recordOn("ncclRedOpCreatePreMulSum", comm, op, scalar, static_cast<int>(datatype), static_cast<int>(residence));
  if (op != nullptr) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    *op = static_cast<ncclRedOp_t>(ncclNumOps + s.created_ops++);
  }
  return result;
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return recordOn("ncclRedOpDestroy", comm, static_cast<int>(op));
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  const ncclResult_t result = record("ncclMemAlloc", nullptr, ptr, size);
  if (result != ncclSuccess) return result;
  if (ptr != nullptr) *ptr = std::malloc(size > 0 ? size : 1);
  return result;
}

ncclResult_t ncclMemFree(void* ptr) {
  const ncclResult_t result = record("ncclMemFree", nullptr, ptr);
  std::free(ptr);
  return result;
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  const ncclResult_t result = recordOn("ncclCommRegister", comm, buff, size, handle);
  if (handle != nullptr) *handle = buff;
  return result;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return recordOn("ncclCommDeregister", comm, handle);
}

}  // extern "C"
