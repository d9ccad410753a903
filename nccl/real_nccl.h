// The real NCCL as the dispatch core calls it: every forwarded function of NCCL's C API with plain types
// (communicators, streams, configurations and unique ids as opaque pointers, enums and results as their
// int values, nccl_values.h). The exported layer implements it over the library it loaded
// (nccl/loaded_nccl.cc), casting each symbol to its exact type from nccl.h; so the core never needs
// the CUDA headers, and a test can give the core an implementation of its own.
//
// Every call returns the real function's own result unchanged. A function the loaded library lacks (an
// optional one, nccl_functions.h) must not be called: ask has() first.
#pragma once

#include <cstddef>

#include "nccl/nccl_functions.h"

namespace peerreduce::nccl {

class RealNccl {
 public:
  virtual ~RealNccl() = default;

  virtual bool has(NcclFunction function) const = 0;
  // What the loaded library is, for messages ("libnccl.so.2 (NCCL 2.28.9)").
  virtual const char* describe() const = 0;

  virtual int getVersion(int* version) = 0;
  virtual int getUniqueId(void* unique_id) = 0;  // kNcclUniqueIdBytes bytes
  virtual int commInitRank(void** comm, int nranks, const void* unique_id, int rank) = 0;
  virtual int commInitRankConfig(void** comm, int nranks, const void* unique_id, int rank, void* config) = 0;
  virtual int commInitAll(void** comms, int ndev, const int* devlist) = 0;
  virtual int commSplit(void* comm, int color, int key, void** newcomm, void* config) = 0;
  virtual int commFinalize(void* comm) = 0;
  virtual int commDestroy(void* comm) = 0;
  virtual int commAbort(void* comm) = 0;
  virtual int commGetAsyncError(void* comm, int* async_error) = 0;
  virtual int commCount(void* comm, int* count) = 0;
  virtual int commCuDevice(void* comm, int* device) = 0;
  virtual int commUserRank(void* comm, int* rank) = 0;
  virtual const char* getErrorString(int result) = 0;
  virtual const char* getLastError(void* comm) = 0;
  virtual int allReduce(const void* send, void* recv, std::size_t count, int dtype, int op, void* comm,
                        void* stream) = 0;
  virtual int reduceScatter(const void* send, void* recv, std::size_t recvcount, int dtype, int op, void* comm,
                            void* stream) = 0;
  virtual int allGather(const void* send, void* recv, std::size_t sendcount, int dtype, void* comm, void* stream) = 0;
  virtual int broadcast(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm,
                        void* stream) = 0;
  virtual int reduce(const void* send, void* recv, std::size_t count, int dtype, int op, int root, void* comm,
                     void* stream) = 0;
  virtual int send(const void* send, std::size_t count, int dtype, int peer, void* comm, void* stream) = 0;
  virtual int recv(void* recv, std::size_t count, int dtype, int peer, void* comm, void* stream) = 0;
  virtual int groupStart() = 0;
  virtual int groupEnd() = 0;
  virtual int redOpCreatePreMulSum(int* op, void* scalar, int dtype, int residence, void* comm) = 0;
  virtual int redOpDestroy(int op, void* comm) = 0;
  virtual int memAlloc(void** ptr, std::size_t size) = 0;
  virtual int memFree(void* ptr) = 0;
  virtual int commRegister(void* comm, void* buffer, std::size_t size, void** handle) = 0;
  virtual int commDeregister(void* comm, void* handle) = 0;
  virtual int bcast(void* buffer, std::size_t count, int dtype, int root, void* comm, void* stream) = 0;
  // unique_ids: nids of kNcclUniqueIdBytes each.
  virtual int commInitRankScalable(void** comm, int nranks, int rank, int nids, void* unique_ids, void* config) = 0;
  virtual int commShrink(void* comm, int* exclude_ranks, int exclude_count, void** newcomm, void* config,
                         int flags) = 0;
  virtual int commRevoke(void* comm, int flags) = 0;
  virtual int alltoAll(const void* send, void* recv, std::size_t count, int dtype, void* comm, void* stream) = 0;
  virtual int gather(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm,
                     void* stream) = 0;
  virtual int scatter(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm,
                      void* stream) = 0;
  virtual int groupSimulateEnd(void* sim_info) = 0;
  // window_out: the caller's ncclWindow_t*, passed through.
  virtual int commWindowRegister(void* comm, void* buffer, std::size_t size, void* window_out, int flags) = 0;
  virtual int commWindowDeregister(void* comm, void* window) = 0;
};

}  // namespace peerreduce::nccl
