// The dispatch core of libpeerreduce_nccl.so: one method per exported NCCL function, with plain types
// (communicators and streams as opaque pointers, enums as ints), so it builds and is tested without the
// CUDA headers. The exported layer (exports.cc) converts NCCL's types and calls it.
//
// What it does:
// - the application holds the real NCCL communicator, made by forwarding the creation call; peerreduce's
//   state of it (a ShadowedComm: peerreduce's side, made over it, peer_side.h) is found from that handle
//   (comm_table.h). A handle without one (made by a function this library does not wrap, or not a
//   communicator at all) goes to the real NCCL untouched, as every function this library does not export;
// - each collective is decided by take_policy.h: taken calls run on peerreduce's side through the C API,
//   the others are forwarded to the real NCCL with their own result;
// - inside ncclGroupStart/ncclGroupEnd (nesting counted) the calls are kept until the group is known: when
//   every one is taken, the allreduces of each (communicator, stream, type, operator) become one
//   prAllReduceBatch at the outermost ncclGroupEnd; at the first call that is not taken, the kept calls
//   are forwarded in order into the real group (opened by every ncclGroupStart, as NCCL's own), and the
//   rest of the group goes there too, so a mixed group is forwarded whole. Communicators created inside a
//   group get their peerreduce side at the outermost ncclGroupEnd, once the real ones exist;
// - abort, destroy and asynchronous errors cover both sides; a peerreduce failure becomes the matching
//   ncclResult_t with its message in ncclGetLastError (last_error.h);
// - PEERREDUCE_DEBUG=INFO logs each choice once per (call, size bucket); PEERREDUCE_NCCL_SUMMARY=1 prints
//   each communicator's counts when it is destroyed.
//
// Thread safety: NCCL's rules. Different communicators from different threads; groups are per thread.
#pragma once

#include <cstddef>
#include <memory>

#include "nccl/collective_call.h"
#include "nccl/comm_table.h"
#include "nccl/real_nccl.h"
#include "nccl/shadowed_comm.h"
#include "peerreduce/status.h"

namespace peerreduce::nccl {

class Dispatcher {
 public:
  // The real NCCL: loaded at the first call that needs it, the same answer (or error) every time after.
  using RealLoader = StatusOr<RealNccl*> (*)();
  explicit Dispatcher(RealLoader load) : load_(load) {}

  int getVersion(int* version);
  int getUniqueId(void* unique_id);
  int commInitRank(void** comm, int nranks, const void* unique_id, int rank);
  int commInitRankConfig(void** comm, int nranks, const void* unique_id, int rank, void* config);
  int commInitAll(void** comms, int ndev, const int* devlist);
  int commSplit(void* comm, int color, int key, void** newcomm, void* config);
  int commInitRankScalable(void** comm, int nranks, int rank, int nids, void* unique_ids, void* config);
  int commShrink(void* comm, int* exclude_ranks, int exclude_count, void** newcomm, void* config, int flags);
  int commRevoke(void* comm, int flags);
  int commFinalize(void* comm);
  int commDestroy(void* comm);
  int commAbort(void* comm);
  int commGetAsyncError(void* comm, int* async_error);
  int commCount(void* comm, int* count);
  int commCuDevice(void* comm, int* device);
  int commUserRank(void* comm, int* rank);
  const char* getErrorString(int result);
  const char* getLastError(void* comm);

  int allReduce(const void* send, void* recv, std::size_t count, int dtype, int op, void* comm, void* stream);
  int reduceScatter(const void* send, void* recv, std::size_t recvcount, int dtype, int op, void* comm, void* stream);
  int allGather(const void* send, void* recv, std::size_t sendcount, int dtype, void* comm, void* stream);
  int broadcast(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm, void* stream);
  int reduce(const void* send, void* recv, std::size_t count, int dtype, int op, int root, void* comm, void* stream);
  int send(const void* send, std::size_t count, int dtype, int peer, void* comm, void* stream);
  int recv(void* recv, std::size_t count, int dtype, int peer, void* comm, void* stream);
  int bcast(void* buffer, std::size_t count, int dtype, int root, void* comm, void* stream);
  int alltoAll(const void* send, void* recv, std::size_t count, int dtype, void* comm, void* stream);
  int gather(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm, void* stream);
  int scatter(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm, void* stream);
  int groupStart();
  int groupEnd();
  int groupSimulateEnd(void* sim_info);

  int redOpCreatePreMulSum(int* op, void* scalar, int dtype, int residence, void* comm);
  int redOpDestroy(int op, void* comm);
  int memAlloc(void** ptr, std::size_t size);
  int memFree(void* ptr);
  int commRegister(void* comm, void* buffer, std::size_t size, void** handle);
  int commDeregister(void* comm, void* handle);
  int commWindowRegister(void* comm, void* buffer, std::size_t size, void* window_out, int flags);
  int commWindowDeregister(void* comm, void* window);

 private:
  // The real NCCL having `function`, or null with the error recorded in *result.
  RealNccl* real(NcclFunction function, int* result);
  // peerreduce's state of the real communicator `handle`; null when this library has none.
  std::shared_ptr<ShadowedComm> ours(void* handle) const;
  // A call that only forwards, its handles untouched: call(real); guarded, the real result
  // (dispatcher_comms.cc).
  template <typename Call>
  int forward(NcclFunction function, Call&& call);

  // Creation (dispatcher_comms.cc). A new ShadowedComm around a real communicator, registered (an error
  // when the table is full); the table owns it.
  StatusOr<std::shared_ptr<ShadowedComm>> adopt(void* real_comm, int rank, int size);
  // Until a real communicator made non-blocking is ready, bounded by the bootstrap timeout: success, the
  // real creation's own failure, or the timeout recorded for `function`.
  int waitReady(const char* function, RealNccl& real, void* comm);
  // Reads a ready real communicator's rank, size and device and makes peerreduce's side. On error the
  // caller ends the communicator.
  Status completeCreation(RealNccl& real, ShadowedComm& comm);
  // completeCreation for several communicators of this thread at once (a thread each: creation is
  // collective); the first error.
  Status completeCreations(RealNccl& real, const std::vector<ShadowedComm*>& comms);
  // A ShadowedComm made from a successful real creation call: completed (now, or at the end of the
  // thread's group) and handed to *out; on failure the real communicator is aborted and nothing stays.
  int finishCreation(const char* function, RealNccl& real, void* real_comm, int rank, int size, void** out);
  // Removes `comm` from the table (aborting peerreduce's side first when `abort`); it is freed, with its
  // side, when the last call using it returns. Safe from any thread, and when two threads end it at once.
  void release(ShadowedComm* comm, bool abort);

  // Collectives (dispatcher_collectives.cc). `call` without its communicator, which `comm` names.
  int enqueue(CollectiveCall call, void* comm);
  int collective(const char* function, const CollectiveCall& call);
  TakeDecision decide(const CollectiveCall& call, const CallShape& shape);
  bool selectsRing(ShadowedComm& comm, int dtype, std::size_t bytes);
  int runTaken(const char* function, const CollectiveCall& call, std::size_t bytes);
  int runTakenGroup(const char* function);
  // The kept calls into the real group, in order; `counted`: they will run (not for a simulated end).
  int forwardGroupSoFar(RealNccl& real, bool counted = true);
  // ncclGroupEnd and ncclGroupSimulateEnd (`simulate`: NCCL estimates the group and runs nothing).
  int endGroup(const char* function, bool simulate, void* sim_info);

  RealLoader load_;
  CommTable comms_;
};

}  // namespace peerreduce::nccl
