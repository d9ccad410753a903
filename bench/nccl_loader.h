// NCCL (or RCCL) loaded at run time with dlopen, for side-by-side measurements in the same run.
//
// Only the handful of entry points the benchmark needs are declared here, with NCCL's documented C
// signatures; no NCCL header is needed to build, and the benchmark still runs (without the comparison)
// where the library is missing.
#pragma once

#include <cstddef>
#include <string>

#include "peerreduce/status.h"
#include "peerreduce/types.h"
#include "portability.h"

namespace peerreduce::bench {

// NCCL's types as its API declares them (ncclUniqueId is 128 opaque bytes).
struct NcclUniqueId {
  char internal[128];
};
using NcclComm = struct ncclComm*;
enum NcclResult : int { kNcclSuccess = 0 };
// ncclDataType_t and ncclRedOp_t values used here.
inline constexpr int kNcclFloat16 = 6;
inline constexpr int kNcclFloat32 = 7;
inline constexpr int kNcclBfloat16 = 9;
inline constexpr int kNcclFloat8e4m3 = 10;  // NCCL 2.24 and later
inline constexpr int kNcclFloat8e5m2 = 11;
inline constexpr int kNcclSum = 0;

// NCCL's value of a type the benchmark runs (collective_units.h: fp32, fp16, bf16, fp8e4m3, fp8e5m2).
inline int ncclDataTypeOf(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return kNcclFloat16;
    case DataType::kBFloat16:
      return kNcclBfloat16;
    case DataType::kFloat8E4M3:
      return kNcclFloat8e4m3;
    case DataType::kFloat8E5M2:
      return kNcclFloat8e5m2;
    default:
      return kNcclFloat32;
  }
}

class Nccl {
 public:
  // Opens `path` (e.g. ".../libnccl.so.2"); kUnavailable with dlerror() if it cannot.
  static StatusOr<Nccl> load(const std::string& path);

  Status getUniqueId(NcclUniqueId* id) const;
  Status commInitRank(NcclComm* comm, int nranks, const NcclUniqueId& id, int rank) const;
  Status allReduce(const void* send, void* recv, std::size_t count, int dtype, int op, NcclComm comm,
                   hipStream_t stream) const;
  Status reduceScatter(const void* send, void* recv, std::size_t recvcount, int dtype, int op, NcclComm comm,
                       hipStream_t stream) const;
  Status allGather(const void* send, void* recv, std::size_t sendcount, int dtype, NcclComm comm,
                   hipStream_t stream) const;
  Status broadcast(const void* send, void* recv, std::size_t count, int dtype, int root, NcclComm comm,
                   hipStream_t stream) const;
  // The NCCL call of `collective` (bench/collective_call.h's counterpart): reductions sum, `root` is
  // broadcast's.
  Status collective(Collective collective, int root, const void* send, void* recv, std::size_t count, int dtype,
                    NcclComm comm, hipStream_t stream) const;
  Status commDestroy(NcclComm comm) const;
  // ncclGroupStart / ncclGroupEnd: the calls between them are issued as one operation.
  Status groupStart() const;
  Status groupEnd() const;
  std::string version() const;

 private:
  Status check(int result, const char* call) const;

  void* handle_ = nullptr;
  int (*get_unique_id_)(NcclUniqueId*) = nullptr;
  int (*comm_init_rank_)(NcclComm*, int, NcclUniqueId, int) = nullptr;
  int (*all_reduce_)(const void*, void*, std::size_t, int, int, NcclComm, hipStream_t) = nullptr;
  int (*reduce_scatter_)(const void*, void*, std::size_t, int, int, NcclComm, hipStream_t) = nullptr;
  int (*all_gather_)(const void*, void*, std::size_t, int, NcclComm, hipStream_t) = nullptr;
  int (*broadcast_)(const void*, void*, std::size_t, int, int, NcclComm, hipStream_t) = nullptr;
  int (*comm_destroy_)(NcclComm) = nullptr;
  int (*group_start_)() = nullptr;
  int (*group_end_)() = nullptr;
  const char* (*get_error_string_)(int) = nullptr;
  int (*get_version_)(int*) = nullptr;
};

}  // namespace peerreduce::bench
