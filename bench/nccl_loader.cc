#include "nccl_loader.h"

#include <dlfcn.h>

#include <string>

namespace peerreduce::bench {
namespace {

template <typename F>
Status bind(void* handle, const char* name, F* out) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) return unavailableError(std::string("NCCL library has no ") + name);
  *out = reinterpret_cast<F>(symbol);
  return Status::ok();
}

}  // namespace

StatusOr<Nccl> Nccl::load(const std::string& path) {
  Nccl nccl;
  nccl.handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (nccl.handle_ == nullptr) {
    const char* why = dlerror();
    return unavailableError("cannot load NCCL from '" + path + "': " + (why ? why : "unknown error"));
  }
  PR_RETURN_IF_ERROR(bind(nccl.handle_, "ncclGetUniqueId", &nccl.get_unique_id_));
  PR_RETURN_IF_ERROR(bind(nccl.handle_, "ncclCommInitRank", &nccl.comm_init_rank_));
  PR_RETURN_IF_ERROR(bind(nccl.handle_, "ncclAllReduce", &nccl.all_reduce_));
  PR_RETURN_IF_ERROR(bind(nccl.handle_, "ncclReduceScatter", &nccl.reduce_scatter_));
  PR_RETURN_IF_ERROR(bind(nccl.handle_, "ncclAllGather", &nccl.all_gather_));
  PR_RETURN_IF_ERROR(bind(nccl.handle_, "ncclBroadcast", &nccl.broadcast_));
  PR_RETURN_IF_ERROR(bind(nccl.handle_, "ncclCommDestroy", &nccl.comm_destroy_));
  PR_RETURN_IF_ERROR(bind(nccl.handle_, "ncclGroupStart", &nccl.group_start_));
  PR_RETURN_IF_ERROR(bind(nccl.handle_, "ncclGroupEnd", &nccl.group_end_));
  PR_RETURN_IF_ERROR(bind(nccl.handle_, "ncclGetErrorString", &nccl.get_error_string_));
  PR_RETURN_IF_ERROR(bind(nccl.handle_, "ncclGetVersion", &nccl.get_version_));
  return nccl;
}

Status Nccl::check(int result, const char* call) const {
  if (result == kNcclSuccess) return Status::ok();
  return unavailableError(std::string(call) + " failed: " + get_error_string_(result));
}

Status Nccl::getUniqueId(NcclUniqueId* id) const { return check(get_unique_id_(id), "ncclGetUniqueId"); }

Status Nccl::commInitRank(NcclComm* comm, int nranks, const NcclUniqueId& id, int rank) const {
  return check(comm_init_rank_(comm, nranks, id, rank), "ncclCommInitRank");
}

Status Nccl::allReduce(const void* send, void* recv, std::size_t count, int dtype, int op, NcclComm comm,
                       hipStream_t stream) const {
  return check(all_reduce_(send, recv, count, dtype, op, comm, stream), "ncclAllReduce");
}

Status Nccl::reduceScatter(const void* send, void* recv, std::size_t recvcount, int dtype, int op, NcclComm comm,
                           hipStream_t stream) const {
  return check(reduce_scatter_(send, recv, recvcount, dtype, op, comm, stream), "ncclReduceScatter");
}

Status Nccl::allGather(const void* send, void* recv, std::size_t sendcount, int dtype, NcclComm comm,
                       hipStream_t stream) const {
  return check(all_gather_(send, recv, sendcount, dtype, comm, stream), "ncclAllGather");
}

Status Nccl::broadcast(const void* send, void* recv, std::size_t count, int dtype, int root, NcclComm comm,
                       hipStream_t stream) const {
  return check(broadcast_(send, recv, count, dtype, root, comm, stream), "ncclBroadcast");
}

Status Nccl::collective(Collective collective, int root, const void* send, void* recv, std::size_t count, int dtype,
                        NcclComm comm, hipStream_t stream) const {
  switch (collective) {
    case Collective::kAllReduce:
      return allReduce(send, recv, count, dtype, kNcclSum, comm, stream);
    case Collective::kReduceScatter:
      return reduceScatter(send, recv, count, dtype, kNcclSum, comm, stream);
    case Collective::kAllGather:
      return allGather(send, recv, count, dtype, comm, stream);
    case Collective::kBroadcast:
      return broadcast(send, recv, count, dtype, root, comm, stream);
  }
  return invalidArgumentError("unknown collective value " + std::to_string(static_cast<int>(collective)));
}

Status Nccl::commDestroy(NcclComm comm) const { return check(comm_destroy_(comm), "ncclCommDestroy"); }

Status Nccl::groupStart() const { return check(group_start_(), "ncclGroupStart"); }

Status Nccl::groupEnd() const { return check(group_end_(), "ncclGroupEnd"); }

std::string Nccl::version() const {
  int v = 0;
  if (get_version_(&v) != kNcclSuccess) return "unknown";
  // NCCL encodes MAJOR*10000 + MINOR*100 + PATCH.
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

}  // namespace peerreduce::bench
