// The dispatcher's communicators and the calls that only forward: creation (the real communicator, then
// peerreduce's side over it), destruction and abort of both, queries, operators, memory and registration.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "nccl/dispatcher.h"
#include "nccl/group_state.h"
#include "nccl/last_error.h"
#include "nccl/nccl_values.h"
#include "peerreduce/config.h"

namespace peerreduce::nccl {
namespace {

constexpr int kInProgress = toInt(NcclResult::kInProgress);

// NCCL_SHRINK_ABORT (nccl.h): the parent's operations in flight are ended before shrinking.
constexpr int kShrinkAbort = 0x01;

// A non-blocking real communicator is polled this often until it is ready: NCCL's own creation takes
// milliseconds to seconds.
constexpr std::chrono::milliseconds kReadyPollPause{1};

bool failed(int result) { return result != kSuccess && result != kInProgress; }

Status realError(RealNccl& real, const char* call, int result) {
  const char* text = real.getErrorString(result);
  return remoteError(std::string(call) + " of the real NCCL " + real.describe() + " failed with " +
                     std::to_string(result) + " (" + (text != nullptr ? text : "no text") + ")");
}

const char* ownErrorString(int result) {
  switch (static_cast<NcclResult>(result)) {
    case NcclResult::kSuccess:
      return "success";
    case NcclResult::kUnhandledCudaError:
      return "unhandled CUDA error";
    case NcclResult::kSystemError:
      return "system error";
    case NcclResult::kInternalError:
      return "internal error";
    case NcclResult::kInvalidArgument:
      return "invalid argument";
    case NcclResult::kInvalidUsage:
      return "invalid usage";
    case NcclResult::kRemoteError:
      return "remote error";
    case NcclResult::kInProgress:
      return "in progress";
  }
  return "unknown result";
}

}  // namespace

RealNccl* Dispatcher::real(NcclFunction function, int* result) {
  const NcclFunctionInfo& info = functionInfo(function);
  // The names are string literals, so their views end in a NUL (and this path, every call's, allocates nothing).
  const char* name = info.name.data();
  auto loaded = load_();
  if (!loaded.isOk()) {
    *result = recordError(name, loaded.status());
    return nullptr;
  }
  RealNccl* real = *loaded;
  if (!real->has(function)) {
    *result = recordError(name, unsupportedError("the NCCL loaded, " + std::string(real->describe()) + ", has no " +
                                                 std::string(info.name) + ", which NCCL " + std::string(info.since) +
                                                 " added; use a newer NCCL"));
    return nullptr;
  }
  return real;
}

std::shared_ptr<ShadowedComm> Dispatcher::ours(void* handle) const { return comms_.find(handle); }

int Dispatcher::waitReady(const char* function, RealNccl& real, void* comm) {
  auto config = Config::fromEnvironment();
  if (!config.isOk()) return recordError(function, config.status());
  const std::chrono::milliseconds timeout = config->bootstrapTimeout();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int state = kSuccess;
    const int queried = real.commGetAsyncError(comm, &state);
    if (queried != kSuccess) return noteRealResult(queried);
    if (state == kSuccess) return kSuccess;
    // The real creation failed: its own result, and its message in ncclGetLastError.
    if (state != kInProgress) return noteRealResult(state);
    if (std::chrono::steady_clock::now() >= deadline) {
      return recordError(function, timeoutError("the real NCCL communicator was still being created after " +
                                                std::to_string(timeout.count()) +
                                                " ms (PEERREDUCE_BOOTSTRAP_TIMEOUT_MS bounds the wait)"));
    }
    std::this_thread::sleep_for(kReadyPollPause);
  }
}

template <typename Call>
int Dispatcher::forward(NcclFunction function, Call&& call) {
  const char* name = functionInfo(function).name.data();
  return guarded(name, [&] {
    int result = kSuccess;
    RealNccl* r = real(function, &result);
    return r == nullptr ? result : noteRealResult(call(*r));
  });
}

StatusOr<std::shared_ptr<ShadowedComm>> Dispatcher::adopt(void* real_comm, int rank, int size) {
  auto comm = std::make_shared<ShadowedComm>();
  comm->real = real_comm;
  comm->rank = rank;
  comm->size = size;
  PR_RETURN_IF_ERROR(comms_.add(comm));
  return comm;
}

Status Dispatcher::completeCreation(RealNccl& real, ShadowedComm& comm) {
  PR_ASSIGN_OR_RETURN(comm.settings, readNcclSettings());
  int result = real.commUserRank(comm.real, &comm.rank);
  if (result == kSuccess) result = real.commCount(comm.real, &comm.size);
  if (result == kSuccess) result = real.commCuDevice(comm.real, &comm.device);
  if (result != kSuccess) return realError(real, "asking the new communicator its rank, size and device", result);
  PeerSideRequest request;
  request.rank = comm.rank;
  request.size = comm.size;
  request.device = comm.device;
  request.real_comm = comm.real;
  request.settings = comm.settings;
  PR_ASSIGN_OR_RETURN(PeerSide side, createPeerSide(real, request));
  TakeTable rows =
      side.comm != nullptr ? comm.settings.take_table->narrowedTo(side.architecture, comm.size) : TakeTable{};
  const std::lock_guard<std::mutex> lock(comm.peer_mutex);
  if (comm.released.load(std::memory_order_acquire)) {
    // The application ended the communicator from another thread while its group was creating it: the
    // side would serve nobody.
    destroyPeerSide(side, true);
    return Status::ok();
  }
  comm.peer = std::move(side);
  comm.take_rows = std::move(rows);
  return Status::ok();
}

Status Dispatcher::completeCreations(RealNccl& real, const std::vector<ShadowedComm*>& comms) {
  if (comms.size() == 1) return completeCreation(real, *comms.front());
  // Creation is collective over each communicator's ranks, which this thread plays all of: a thread each,
  // joined before returning (each creation is bounded by its timeouts).
  std::vector<Status> results(comms.size());
  std::vector<std::thread> threads;
  threads.reserve(comms.size());
  for (std::size_t i = 0; i < comms.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        results[i] = completeCreation(real, *comms[i]);
      } catch (const std::exception& e) {
        results[i] = internalError(std::string("unexpected exception while creating a communicator: ") + e.what());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const Status& status : results) PR_RETURN_IF_ERROR(status);
  return Status::ok();
}

void Dispatcher::release(ShadowedComm* comm, bool abort) {
  std::shared_ptr<ShadowedComm> owned = comms_.remove(comm->real);
  if (owned == nullptr) return;  // another thread ended it first
  const std::lock_guard<std::mutex> lock(owned->peer_mutex);
  // The summary is printed when the state is freed (shadowed_comm.h), after the last call using it.
  owned->released.store(true, std::memory_order_release);
  // Ends the waits of a call another thread may be in; that call frees the side when it returns.
  if (abort && owned->peer.comm != nullptr) (void)prCommAbort(owned->peer.comm);
}

int Dispatcher::finishCreation(const char* function, RealNccl& real, void* real_comm, int rank, int size, void** out) {
  auto adopted = adopt(real_comm, rank, size);
  if (!adopted.isOk()) {
    (void)real.commAbort(real_comm);
    return recordError(function, adopted.status());
  }
  ShadowedComm* comm = adopted->get();
  GroupState& group = threadGroup();
  if (group.depth > 0) {
    // The real communicator exists only once the real group ends: peerreduce's side is made then. The group
    // holds the state: the application may end the communicator from another thread before then.
    group.created.push_back(std::move(*adopted));
    *out = real_comm;
    return kSuccess;
  }
  // A non-blocking creation is waited for: the application gets a ready communicator (or the failure).
  const int ready = waitReady(function, real, real_comm);
  const Status created = ready == kSuccess ? completeCreation(real, *comm) : Status::ok();
  if (ready != kSuccess || !created.isOk()) {
    release(comm, true);
    (void)real.commAbort(real_comm);
    return ready != kSuccess ? ready : recordError(function, created);
  }
  *out = real_comm;
  return kSuccess;
}

int Dispatcher::getVersion(int* version) {
  return forward(NcclFunction::kGetVersion, [&](RealNccl& r) { return r.getVersion(version); });
}

int Dispatcher::getUniqueId(void* unique_id) {
  return forward(NcclFunction::kGetUniqueId, [&](RealNccl& r) { return r.getUniqueId(unique_id); });
}

int Dispatcher::commInitRank(void** comm, int nranks, const void* unique_id, int rank) {
  constexpr const char* kFunction = "ncclCommInitRank";
  return guarded(kFunction, [&] {
    int result = kSuccess;
    RealNccl* r = real(NcclFunction::kCommInitRank, &result);
    if (r == nullptr) return result;
    if (comm == nullptr)
      return recordError(kFunction, invalidArgumentError("comm is NULL; pass the address of an ncclComm_t"));
    *comm = nullptr;
    void* made = nullptr;
    result = r->commInitRank(&made, nranks, unique_id, rank);
    if (failed(result)) return noteRealResult(result);
    return finishCreation(kFunction, *r, made, rank, nranks, comm);
  });
}

int Dispatcher::commInitRankConfig(void** comm, int nranks, const void* unique_id, int rank, void* config) {
  constexpr const char* kFunction = "ncclCommInitRankConfig";
  return guarded(kFunction, [&] {
    int result = kSuccess;
    RealNccl* r = real(NcclFunction::kCommInitRankConfig, &result);
    if (r == nullptr) return result;
    if (comm == nullptr)
      return recordError(kFunction, invalidArgumentError("comm is NULL; pass the address of an ncclComm_t"));
    *comm = nullptr;
    void* made = nullptr;
    result = r->commInitRankConfig(&made, nranks, unique_id, rank, config);
    if (failed(result)) return noteRealResult(result);
    // A non-blocking communicator is waited for: it is ready (or failed) when this returns.
    return finishCreation(kFunction, *r, made, rank, nranks, comm);
  });
}

int Dispatcher::commInitAll(void** comms, int ndev, const int* devlist) {
  constexpr const char* kFunction = "ncclCommInitAll";
  return guarded(kFunction, [&] {
    int result = kSuccess;
    RealNccl* r = real(NcclFunction::kCommInitAll, &result);
    if (r == nullptr) return result;
    if (comms == nullptr) {
      return recordError(kFunction, invalidArgumentError("comms is NULL; pass an array of ndev ncclComm_t"));
    }
    if (ndev <= 0) return noteRealResult(r->commInitAll(comms, ndev, devlist));  // NCCL says what is wrong
    std::vector<void*> reals(static_cast<std::size_t>(ndev), nullptr);
    result = r->commInitAll(reals.data(), ndev, devlist);
    if (failed(result)) return noteRealResult(result);
    std::vector<ShadowedComm*> made;
    made.reserve(reals.size());
    Status created = Status::ok();
    for (int i = 0; i < ndev && created.isOk(); ++i) {
      auto adopted = adopt(reals[static_cast<std::size_t>(i)], i, ndev);
      if (adopted.isOk()) {
        made.push_back(adopted->get());
      } else {
        created = adopted.status();
      }
    }
    if (created.isOk()) created = completeCreations(*r, made);
    if (!created.isOk()) {
      for (ShadowedComm* comm : made) release(comm, true);
      for (void* real_comm : reals) (void)r->commAbort(real_comm);
      return recordError(kFunction, created);
    }
    for (int i = 0; i < ndev; ++i) comms[i] = reals[static_cast<std::size_t>(i)];
    return kSuccess;
  });
}

int Dispatcher::commSplit(void* comm, int color, int key, void** newcomm, void* config) {
  constexpr const char* kFunction = "ncclCommSplit";
  return guarded(kFunction, [&] {
    int result = kSuccess;
    RealNccl* r = real(NcclFunction::kCommSplit, &result);
    if (r == nullptr) return result;
    if (newcomm == nullptr) {
      return recordError(kFunction, invalidArgumentError("newcomm is NULL; pass the address of an ncclComm_t"));
    }
    *newcomm = nullptr;
    void* made = nullptr;
    // The parent is the real NCCL's handle, ours or not: the child gets a peerreduce side either way.
    result = r->commSplit(comm, color, key, &made, config);
    if (failed(result)) return noteRealResult(result);
    if (made == nullptr) return kSuccess;  // NCCL_SPLIT_NOCOLOR: this rank is in no new communicator
    return finishCreation(kFunction, *r, made, -1, 0, newcomm);
  });
}

int Dispatcher::commInitRankScalable(void** comm, int nranks, int rank, int nids, void* unique_ids, void* config) {
  constexpr const char* kFunction = "ncclCommInitRankScalable";
  return guarded(kFunction, [&] {
    int result = kSuccess;
    RealNccl* r = real(NcclFunction::kCommInitRankScalable, &result);
    if (r == nullptr) return result;
    if (comm == nullptr) {
      return recordError(kFunction, invalidArgumentError("newcomm is NULL; pass the address of an ncclComm_t"));
    }
    *comm = nullptr;
    void* made = nullptr;
    result = r->commInitRankScalable(&made, nranks, rank, nids, unique_ids, config);
    if (failed(result)) return noteRealResult(result);
    return finishCreation(kFunction, *r, made, rank, nranks, comm);
  });
}

int Dispatcher::commShrink(void* comm, int* exclude_ranks, int exclude_count, void** newcomm, void* config, int flags) {
  constexpr const char* kFunction = "ncclCommShrink";
  return guarded(kFunction, [&] {
    int result = kSuccess;
    RealNccl* r = real(NcclFunction::kCommShrink, &result);
    if (r == nullptr) return result;
    if (newcomm == nullptr) {
      return recordError(kFunction, invalidArgumentError("newcomm is NULL; pass the address of an ncclComm_t"));
    }
    *newcomm = nullptr;
    // Shrinking with NCCL_SHRINK_ABORT ends the parent's operations in flight, peerreduce's among them:
    // its side is aborted first (the excluded ranks will never reach its collectives), and the parent,
    // left only to be destroyed, forwards from then on.
    if ((flags & kShrinkAbort) != 0) {
      if (auto parent = ours(comm)) parent->endPeer("ncclCommShrink with NCCL_SHRINK_ABORT aborted it");
    }
    void* made = nullptr;
    result = r->commShrink(comm, exclude_ranks, exclude_count, &made, config, flags);
    if (failed(result)) return noteRealResult(result);
    if (made == nullptr) return kSuccess;  // an excluded rank: no new communicator
    return finishCreation(kFunction, *r, made, -1, 0, newcomm);
  });
}

int Dispatcher::commRevoke(void* comm, int flags) {
  constexpr const char* kFunction = "ncclCommRevoke";
  return guarded(kFunction, [&] {
    int result = kSuccess;
    RealNccl* r = real(NcclFunction::kCommRevoke, &result);
    if (r == nullptr) return result;
    // A revoked communicator stops its operations in flight, peerreduce's too; afterwards it is only
    // destroyed, split or shrunk, so peerreduce's side is not needed again.
    if (auto c = ours(comm)) c->endPeer("ncclCommRevoke revoked it");
    return noteRealResult(r->commRevoke(comm, flags));
  });
}

int Dispatcher::commFinalize(void* comm) {
  // peerreduce's side keeps its operations on the application's streams: only the real one has any to flush.
  return forward(NcclFunction::kCommFinalize, [&](RealNccl& r) { return r.commFinalize(comm); });
}

int Dispatcher::commDestroy(void* comm) {
  constexpr const char* kFunction = "ncclCommDestroy";
  return guarded(kFunction, [&] {
    int result = kSuccess;
    RealNccl* r = real(NcclFunction::kCommDestroy, &result);
    if (r == nullptr) return result;
    // A handle this library does not know goes to the real NCCL untouched, to serve or refuse.
    if (auto c = ours(comm)) release(c.get(), false);
    return noteRealResult(r->commDestroy(comm));
  });
}

int Dispatcher::commAbort(void* comm) {
  constexpr const char* kFunction = "ncclCommAbort";
  return guarded(kFunction, [&] {
    int result = kSuccess;
    RealNccl* r = real(NcclFunction::kCommAbort, &result);
    if (r == nullptr) return result;
    if (auto c = ours(comm)) release(c.get(), true);
    return noteRealResult(r->commAbort(comm));
  });
}

int Dispatcher::commGetAsyncError(void* comm, int* async_error) {
  constexpr const char* kFunction = "ncclCommGetAsyncError";
  return guarded(kFunction, [&] {
    int result = kSuccess;
    RealNccl* r = real(NcclFunction::kCommGetAsyncError, &result);
    if (r == nullptr) return result;
    const std::shared_ptr<ShadowedComm> c = ours(comm);
    // Without peerreduce's side (or without a place for the answer) the real NCCL answers alone.
    if (c == nullptr || async_error == nullptr) return noteRealResult(r->commGetAsyncError(comm, async_error));
    if (c->peerUsable()) {
      const prResult_t mine = prCommGetAsyncError(c->peer.comm);
      if (mine != prSuccess) {
        *async_error = recordPeerreduceFailure(kFunction, mine);
        return kSuccess;
      }
    }
    return noteRealResult(r->commGetAsyncError(comm, async_error));
  });
}

int Dispatcher::commCount(void* comm, int* count) {
  return forward(NcclFunction::kCommCount, [&](RealNccl& r) { return r.commCount(comm, count); });
}

int Dispatcher::commCuDevice(void* comm, int* device) {
  return forward(NcclFunction::kCommCuDevice, [&](RealNccl& r) { return r.commCuDevice(comm, device); });
}

int Dispatcher::commUserRank(void* comm, int* rank) {
  return forward(NcclFunction::kCommUserRank, [&](RealNccl& r) { return r.commUserRank(comm, rank); });
}

const char* Dispatcher::getErrorString(int result) {
  try {
    auto loaded = load_();
    if (loaded.isOk()) return (*loaded)->getErrorString(result);
  } catch (...) {
    // Loading failed to allocate: the library's own names still answer.
  }
  return ownErrorString(result);
}

const char* Dispatcher::getLastError(void* comm) {
  if (const char* own = ownLastError()) return own;
  try {
    auto loaded = load_();
    if (!loaded.isOk() || !(*loaded)->has(NcclFunction::kGetLastError)) return "";
    return (*loaded)->getLastError(comm);
  } catch (...) {
    return "";
  }
}

int Dispatcher::redOpCreatePreMulSum(int* op, void* scalar, int dtype, int residence, void* comm) {
  return forward(NcclFunction::kRedOpCreatePreMulSum,
                 [&](RealNccl& r) { return r.redOpCreatePreMulSum(op, scalar, dtype, residence, comm); });
}

int Dispatcher::redOpDestroy(int op, void* comm) {
  return forward(NcclFunction::kRedOpDestroy, [&](RealNccl& r) { return r.redOpDestroy(op, comm); });
}

int Dispatcher::memAlloc(void** ptr, std::size_t size) {
  return forward(NcclFunction::kMemAlloc, [&](RealNccl& r) { return r.memAlloc(ptr, size); });
}

int Dispatcher::memFree(void* ptr) {
  return forward(NcclFunction::kMemFree, [&](RealNccl& r) { return r.memFree(ptr); });
}

int Dispatcher::commRegister(void* comm, void* buffer, std::size_t size, void** handle) {
  return forward(NcclFunction::kCommRegister, [&](RealNccl& r) { return r.commRegister(comm, buffer, size, handle); });
}

int Dispatcher::commDeregister(void* comm, void* handle) {
  return forward(NcclFunction::kCommDeregister, [&](RealNccl& r) { return r.commDeregister(comm, handle); });
}

int Dispatcher::commWindowRegister(void* comm, void* buffer, std::size_t size, void* window_out, int flags) {
  return forward(NcclFunction::kCommWindowRegister,
                 [&](RealNccl& r) { return r.commWindowRegister(comm, buffer, size, window_out, flags); });
}

int Dispatcher::commWindowDeregister(void* comm, void* window) {
  return forward(NcclFunction::kCommWindowDeregister,
                 [&](RealNccl& r) { return r.commWindowDeregister(comm, window); });
}

}  // namespace peerreduce::nccl
