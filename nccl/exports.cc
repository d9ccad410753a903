// libpeerreduce_nccl.so's exported functions: NCCL's C API with the exact declarations of the toolkit's
// nccl.h (a definition that differed from the header would not compile), each under its NCCL name and the
// p-prefixed one, and nothing else (exports.map). Each converts NCCL's types to the dispatch core's plain
// ones (dispatcher.h) and back; no function lets an exception through. The communicators handed to the
// application are the real NCCL's own, so the functions of NCCL's API not exported here reach the real
// library directly and work (docs/NCCL.md lists them).
#include <nccl.h>

#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "nccl/dispatcher.h"
#include "nccl/last_error.h"
#include "nccl/loaded_nccl.h"
#include "nccl/nccl_header_version.h"  // refuses an nccl.h older than the API defined here

namespace {

peerreduce::nccl::Dispatcher& dispatcher() {
  // Never destroyed: an application may call NCCL from its own static destructors, after ours would run.
  // Built in static storage, so making it cannot throw into the application.
  alignas(peerreduce::nccl::Dispatcher) static unsigned char storage[sizeof(peerreduce::nccl::Dispatcher)];
  static auto* instance = new (storage) peerreduce::nccl::Dispatcher(&peerreduce::nccl::loadedRealNccl);
  return *instance;
}

ncclResult_t resultOf(int result) { return static_cast<ncclResult_t>(result); }
ncclComm_t commOf(void* comm) { return static_cast<ncclComm_t>(comm); }

// Calls from inside the real NCCL (loaded_nccl.h, RealCallScope): the real library may call its own
// exported functions, which with this library preloaded resolve to ours; such a call goes straight to
// the real function, untouched (its handles are the real NCCL's, which the dispatcher does not know).
template <typename Function, typename... Args>
auto callReal(peerreduce::nccl::NcclFunction function, Args... args) {
  using Result = decltype(std::declval<Function*>()(args...));
  void* symbol = peerreduce::nccl::loadedRealSymbol(function);
  if (symbol == nullptr) {
    if constexpr (std::is_same_v<Result, ncclResult_t>) {
      return ncclInternalError;  // cannot happen: a call from inside the real NCCL means it is loaded
    } else {
      return static_cast<Result>("peerreduce: the real NCCL is not loaded");
    }
  }
  return reinterpret_cast<Function*>(symbol)(args...);
}

}  // namespace

// At the top of every exported function: from inside the real NCCL, the real function.
#define PR_NCCL_ENTRY(name, ...)                                                                   \
  if (peerreduce::nccl::insideRealCall()) {                                                        \
    return callReal<decltype(nccl##name)>(peerreduce::nccl::NcclFunction::k##name, ##__VA_ARGS__); \
  }                                                                                                \
  static_assert(true)

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  PR_NCCL_ENTRY(GetVersion, version);
  return resultOf(dispatcher().getVersion(version));
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  PR_NCCL_ENTRY(GetUniqueId, uniqueId);
  return resultOf(dispatcher().getUniqueId(uniqueId));
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  PR_NCCL_ENTRY(CommInitRank, comm, nranks, commId, rank);
  void* made = nullptr;
  const int result = dispatcher().commInitRank(comm != nullptr ? &made : nullptr, nranks, &commId, rank);
  if (comm != nullptr) *comm = commOf(made);
  return resultOf(result);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  PR_NCCL_ENTRY(CommInitRankConfig, comm, nranks, commId, rank, config);
  void* made = nullptr;
  const int result = dispatcher().commInitRankConfig(comm != nullptr ? &made : nullptr, nranks, &commId, rank, config);
  if (comm != nullptr) *comm = commOf(made);
  return resultOf(result);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  PR_NCCL_ENTRY(CommInitAll, comm, ndev, devlist);
  return resultOf(peerreduce::nccl::guarded("ncclCommInitAll", [&] {
    std::vector<void*> made(ndev > 0 ? static_cast<std::size_t>(ndev) : 0, nullptr);
    const int result = dispatcher().commInitAll(comm != nullptr ? made.data() : nullptr, ndev, devlist);
    if (comm != nullptr && result == ncclSuccess) {
      for (std::size_t i = 0; i < made.size(); ++i) comm[i] = commOf(made[i]);
    }
    return result;
  }));
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  PR_NCCL_ENTRY(CommSplit, comm, color, key, newcomm, config);
  void* made = nullptr;
  const int result = dispatcher().commSplit(comm, color, key, newcomm != nullptr ? &made : nullptr, config);
  if (newcomm != nullptr) *newcomm = commOf(made);
  return resultOf(result);
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  PR_NCCL_ENTRY(CommInitRankScalable, newcomm, nranks, myrank, nId, commIds, config);
  void* made = nullptr;
  const int result =
      dispatcher().commInitRankScalable(newcomm != nullptr ? &made : nullptr, nranks, myrank, nId, commIds, config);
  if (newcomm != nullptr) *newcomm = commOf(made);
  return resultOf(result);
}

ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags) {
  PR_NCCL_ENTRY(CommShrink, comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  void* made = nullptr;
  const int result = dispatcher().commShrink(comm, excludeRanksList, excludeRanksCount,
                                             newcomm != nullptr ? &made : nullptr, config, shrinkFlags);
  if (newcomm != nullptr) *newcomm = commOf(made);
  return resultOf(result);
}

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  PR_NCCL_ENTRY(CommRevoke, comm, revokeFlags);
  return resultOf(dispatcher().commRevoke(comm, revokeFlags));
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  PR_NCCL_ENTRY(CommFinalize, comm);
  return resultOf(dispatcher().commFinalize(comm));
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  PR_NCCL_ENTRY(CommDestroy, comm);
  return resultOf(dispatcher().commDestroy(comm));
}
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  PR_NCCL_ENTRY(CommAbort, comm);
  return resultOf(dispatcher().commAbort(comm));
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  PR_NCCL_ENTRY(CommGetAsyncError, comm, asyncError);
  int state = ncclSuccess;
  const int result = dispatcher().commGetAsyncError(comm, asyncError != nullptr ? &state : nullptr);
  if (asyncError != nullptr && result == ncclSuccess) *asyncError = resultOf(state);
  return resultOf(result);
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  PR_NCCL_ENTRY(CommCount, comm, count);
  return resultOf(dispatcher().commCount(comm, count));
}
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  PR_NCCL_ENTRY(CommCuDevice, comm, device);
  return resultOf(dispatcher().commCuDevice(comm, device));
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  PR_NCCL_ENTRY(CommUserRank, comm, rank);
  return resultOf(dispatcher().commUserRank(comm, rank));
}

const char* ncclGetErrorString(ncclResult_t result) {
  PR_NCCL_ENTRY(GetErrorString, result);
  return dispatcher().getErrorString(result);
}
const char* ncclGetLastError(ncclComm_t comm) {
  PR_NCCL_ENTRY(GetLastError, comm);
  return dispatcher().getLastError(comm);
}

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  PR_NCCL_ENTRY(AllReduce, sendbuff, recvbuff, count, datatype, op, comm, stream);
  return resultOf(dispatcher().allReduce(sendbuff, recvbuff, count, datatype, op, comm, stream));
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  PR_NCCL_ENTRY(ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
  return resultOf(dispatcher().reduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm, stream));
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  PR_NCCL_ENTRY(AllGather, sendbuff, recvbuff, sendcount, datatype, comm, stream);
  return resultOf(dispatcher().allGather(sendbuff, recvbuff, sendcount, datatype, comm, stream));
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  PR_NCCL_ENTRY(Broadcast, sendbuff, recvbuff, count, datatype, root, comm, stream);
  return resultOf(dispatcher().broadcast(sendbuff, recvbuff, count, datatype, root, comm, stream));
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  PR_NCCL_ENTRY(Bcast, buff, count, datatype, root, comm, stream);
  return resultOf(dispatcher().bcast(buff, count, datatype, root, comm, stream));
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
  PR_NCCL_ENTRY(AlltoAll, sendbuff, recvbuff, count, datatype, comm, stream);
  return resultOf(dispatcher().alltoAll(sendbuff, recvbuff, count, datatype, comm, stream));
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  PR_NCCL_ENTRY(Gather, sendbuff, recvbuff, count, datatype, root, comm, stream);
  return resultOf(dispatcher().gather(sendbuff, recvbuff, count, datatype, root, comm, stream));
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  PR_NCCL_ENTRY(Scatter, sendbuff, recvbuff, count, datatype, root, comm, stream);
  return resultOf(dispatcher().scatter(sendbuff, recvbuff, count, datatype, root, comm, stream));
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  PR_NCCL_ENTRY(Reduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
  return resultOf(dispatcher().reduce(sendbuff, recvbuff, count, datatype, op, root, comm, stream));
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  PR_NCCL_ENTRY(Send, sendbuff, count, datatype, peer, comm, stream);
  return resultOf(dispatcher().send(sendbuff, count, datatype, peer, comm, stream));
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  PR_NCCL_ENTRY(Recv, recvbuff, count, datatype, peer, comm, stream);
  return resultOf(dispatcher().recv(recvbuff, count, datatype, peer, comm, stream));
}

ncclResult_t ncclGroupStart() {
  PR_NCCL_ENTRY(GroupStart);
  return resultOf(dispatcher().groupStart());
}
ncclResult_t ncclGroupEnd() {
  PR_NCCL_ENTRY(GroupEnd);
  return resultOf(dispatcher().groupEnd());
}

ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  PR_NCCL_ENTRY(GroupSimulateEnd, simInfo);
  return resultOf(dispatcher().groupSimulateEnd(simInfo));
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  PR_NCCL_ENTRY(RedOpCreatePreMulSum, op, scalar, datatype, residence, comm);
  int made = ncclSum;
  const int result =
      dispatcher().redOpCreatePreMulSum(op != nullptr ? &made : nullptr, scalar, datatype, residence, comm);
  if (op != nullptr && result == ncclSuccess) *op = static_cast<ncclRedOp_t>(made);
  return resultOf(result);
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  PR_NCCL_ENTRY(RedOpDestroy, op, comm);
  return resultOf(dispatcher().redOpDestroy(op, comm));
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  PR_NCCL_ENTRY(MemAlloc, ptr, size);
  return resultOf(dispatcher().memAlloc(ptr, size));
}
ncclResult_t ncclMemFree(void* ptr) {
  PR_NCCL_ENTRY(MemFree, ptr);
  return resultOf(dispatcher().memFree(ptr));
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  PR_NCCL_ENTRY(CommRegister, comm, buff, size, handle);
  return resultOf(dispatcher().commRegister(comm, buff, size, handle));
}
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  PR_NCCL_ENTRY(CommDeregister, comm, handle);
  return resultOf(dispatcher().commDeregister(comm, handle));
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  PR_NCCL_ENTRY(CommWindowRegister, comm, buff, size, win, winFlags);
  return resultOf(dispatcher().commWindowRegister(comm, buff, size, win, winFlags));
}
ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  PR_NCCL_ENTRY(CommWindowDeregister, comm, win);
  return resultOf(dispatcher().commWindowDeregister(comm, win));
}

// The p-prefixed names (NCCL's profiling interface) are the same functions.
#define PR_NCCL_ALIAS(name) __attribute__((alias(#name)))
ncclResult_t pncclGetVersion(int* version) PR_NCCL_ALIAS(ncclGetVersion);
ncclResult_t pncclGetUniqueId(ncclUniqueId* uniqueId) PR_NCCL_ALIAS(ncclGetUniqueId);
ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank)
    PR_NCCL_ALIAS(ncclCommInitRank);
ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config)
    PR_NCCL_ALIAS(ncclCommInitRankConfig);
ncclResult_t pncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) PR_NCCL_ALIAS(ncclCommInitAll);
ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config)
    PR_NCCL_ALIAS(ncclCommSplit);
ncclResult_t pncclCommFinalize(ncclComm_t comm) PR_NCCL_ALIAS(ncclCommFinalize);
ncclResult_t pncclCommDestroy(ncclComm_t comm) PR_NCCL_ALIAS(ncclCommDestroy);
ncclResult_t pncclCommAbort(ncclComm_t comm) PR_NCCL_ALIAS(ncclCommAbort);
ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) PR_NCCL_ALIAS(ncclCommGetAsyncError);
ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) PR_NCCL_ALIAS(ncclCommCount);
ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device) PR_NCCL_ALIAS(ncclCommCuDevice);
ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) PR_NCCL_ALIAS(ncclCommUserRank);
const char* pncclGetErrorString(ncclResult_t result) PR_NCCL_ALIAS(ncclGetErrorString);
const char* pncclGetLastError(ncclComm_t comm) PR_NCCL_ALIAS(ncclGetLastError);
ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                            ncclComm_t comm, cudaStream_t stream) PR_NCCL_ALIAS(ncclAllReduce);
ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) PR_NCCL_ALIAS(ncclReduceScatter);
ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                            ncclComm_t comm, cudaStream_t stream) PR_NCCL_ALIAS(ncclAllGather);
ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                            ncclComm_t comm, cudaStream_t stream) PR_NCCL_ALIAS(ncclBroadcast);
ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                         int root, ncclComm_t comm, cudaStream_t stream) PR_NCCL_ALIAS(ncclReduce);
ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream) PR_NCCL_ALIAS(ncclSend);
ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                       cudaStream_t stream) PR_NCCL_ALIAS(ncclRecv);
ncclResult_t pncclGroupStart() PR_NCCL_ALIAS(ncclGroupStart);
ncclResult_t pncclGroupEnd() PR_NCCL_ALIAS(ncclGroupEnd);
ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm)
    PR_NCCL_ALIAS(ncclRedOpCreatePreMulSum);
ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) PR_NCCL_ALIAS(ncclRedOpDestroy);
ncclResult_t pncclMemAlloc(void** ptr, size_t size) PR_NCCL_ALIAS(ncclMemAlloc);
ncclResult_t pncclMemFree(void* ptr) PR_NCCL_ALIAS(ncclMemFree);
ncclResult_t pncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle)
    PR_NCCL_ALIAS(ncclCommRegister);
ncclResult_t pncclCommDeregister(const ncclComm_t comm, void* handle) PR_NCCL_ALIAS(ncclCommDeregister);
ncclResult_t pncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                       ncclConfig_t* config) PR_NCCL_ALIAS(ncclCommInitRankScalable);
ncclResult_t pncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                             ncclConfig_t* config, int shrinkFlags) PR_NCCL_ALIAS(ncclCommShrink);
ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags) PR_NCCL_ALIAS(ncclCommRevoke);
ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                        cudaStream_t stream) PR_NCCL_ALIAS(ncclBcast);
ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                           cudaStream_t stream) PR_NCCL_ALIAS(ncclAlltoAll);
ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) PR_NCCL_ALIAS(ncclGather);
ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                          ncclComm_t comm, cudaStream_t stream) PR_NCCL_ALIAS(ncclScatter);
ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo) PR_NCCL_ALIAS(ncclGroupSimulateEnd);
ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags)
    PR_NCCL_ALIAS(ncclCommWindowRegister);
ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) PR_NCCL_ALIAS(ncclCommWindowDeregister);
#undef PR_NCCL_ALIAS

}  // extern "C"
