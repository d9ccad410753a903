// The dispatcher's collectives and groups: each call decided (take_policy.h), logged once per (call, size
// bucket), run on peerreduce's side or forwarded; groups kept, batched or forwarded whole (dispatcher.h).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "nccl/dispatcher.h"
#include "nccl/group_state.h"
#include "nccl/last_error.h"
#include "nccl/nccl_values.h"
#include "nccl/type_mapping.h"
#include "peerreduce/communicator.h"
#include "util/log.h"

namespace peerreduce::nccl {
namespace {

NcclFunction functionOf(CallKind kind) {
  switch (kind) {
    case CallKind::kAllReduce:
      return NcclFunction::kAllReduce;
    case CallKind::kReduceScatter:
      return NcclFunction::kReduceScatter;
    case CallKind::kAllGather:
      return NcclFunction::kAllGather;
    case CallKind::kBroadcast:
      return NcclFunction::kBroadcast;
    case CallKind::kBcast:
      return NcclFunction::kBcast;
    case CallKind::kReduce:
      return NcclFunction::kReduce;
    case CallKind::kSend:
      return NcclFunction::kSend;
    case CallKind::kRecv:
      return NcclFunction::kRecv;
    case CallKind::kAlltoAll:
      return NcclFunction::kAlltoAll;
    case CallKind::kGather:
      return NcclFunction::kGather;
    case CallKind::kScatter:
      return NcclFunction::kScatter;
  }
  return NcclFunction::kAllReduce;
}

// The ring_selected cache's values.
constexpr std::uint8_t kRingUnknown = 0;
constexpr std::uint8_t kRingYes = 1;
constexpr std::uint8_t kRingNo = 2;

// Allreduces that become one batch: the same communicator, stream, type and operator.
bool sameBatch(const CollectiveCall& a, const CollectiveCall& b) {
  return a.kind == CallKind::kAllReduce && b.kind == CallKind::kAllReduce && a.comm == b.comm && a.stream == b.stream &&
         a.dtype == b.dtype && a.op == b.op;
}

// The root argument names a rank of the communicator, or the kind has none.
bool rootFits(const CollectiveCall& call) {
  const bool rooted =
      call.kind == CallKind::kBroadcast || call.kind == CallKind::kBcast || call.kind == CallKind::kReduce;
  return !rooted || (call.root >= 0 && call.root < call.comm->size);
}

}  // namespace

bool Dispatcher::selectsRing(ShadowedComm& comm, int dtype, std::size_t bytes) {
  const std::size_t element = ncclDataTypeBytes(dtype);
  if (bytes == 0 || element == 0) return false;
  const auto bucket = static_cast<std::size_t>(AlgorithmSelector::bucketOf(bytes));
  if (comm.ring_selected[bucket] == kRingUnknown) {
    prSelection_t selection{};
    const prResult_t asked = prCommExplainSelection(comm.peer.comm, bytes / element, toPrDataType(dtype), &selection);
    // A selection that cannot be explained is no reason to forward: the call itself then reports it.
    comm.ring_selected[bucket] = asked == prSuccess && selection.chosen == prAlgoRing ? kRingYes : kRingNo;
  }
  return comm.ring_selected[bucket] == kRingYes;
}

TakeDecision Dispatcher::decide(const CollectiveCall& call, const CallShape& shape) {
  ShadowedComm& comm = *call.comm;
  const CommFacts facts{comm.peerUsable(), comm.peer.architecture, comm.size, &comm.take_rows};
  const TakeDecision decision = decideTake(comm.settings.take, facts, shape,
                                           [&](std::size_t bytes) { return selectsRing(comm, call.dtype, bytes); });
  if (logEnabled(LogLevel::kInfo)) {
    const std::size_t index = static_cast<std::size_t>(call.kind) * kSelectorBuckets +
                              static_cast<std::size_t>(AlgorithmSelector::bucketOf(shape.bytes));
    if (!comm.logged[index]) {
      comm.logged[index] = true;
      const bool absent = decision.reason == TakeReason::kNoCommunicator;
      const std::string why = absent ? comm.whyNoPeer() : std::string();
      const bool reducing =
          call.kind == CallKind::kAllReduce || call.kind == CallKind::kReduceScatter || call.kind == CallKind::kReduce;
      PR_INFO(comm.rank, "nccl: %s of %zu bytes (%s%s%s) and its size bucket: %s, %s%s%s", callKindName(call.kind),
              shape.bytes, ncclDataTypeName(call.dtype), reducing ? ", " : "", reducing ? ncclRedOpName(call.op) : "",
              decision.take ? "peerreduce" : "forwarded to NCCL", takeReasonText(decision.reason), absent ? ": " : "",
              why.c_str());
    }
  }
  return decision;
}

int Dispatcher::runTaken(const char* function, const CollectiveCall& call, std::size_t bytes) {
  ShadowedComm& comm = *call.comm;
  comm.counters.count(call.kind, true, bytes);
  const prResult_t taken = takeCall(call);
  // Recorded before synchronizing, whose own message would replace the C API's.
  int outcome = taken == prSuccess ? kSuccess : recordPeerreduceFailure(function, taken);
  if (comm.peer.on_simulator) {
    // No stream to wait on: the simulated world runs the operation now. Synchronizing is collective over
    // the rank threads, so a rank whose call failed synchronizes too (a rank that did not would leave the
    // others waiting for it until their timeout, as when ranks disagree on an operation).
    const prResult_t synced = prCommSynchronize(comm.peer.comm, nullptr);
    if (outcome == kSuccess && synced != prSuccess) outcome = recordPeerreduceFailure(function, synced);
  }
  return outcome;
}

int Dispatcher::forwardGroupSoFar(RealNccl& real, bool counted) {
  GroupState& group = threadGroup();
  int first = kSuccess;
  for (const CollectiveCall& kept : group.kept) {
    if (counted) kept.comm->counters.count(kept.kind, false, shapeOf(kept).bytes);
    const int result = noteRealResult(forwardCall(real, kept));
    if (first == kSuccess) first = result;
  }
  group.kept.clear();
  group.forwarding = true;
  return first;
}

int Dispatcher::collective(const char* function, const CollectiveCall& call) {
  int result = kSuccess;
  RealNccl* r = real(functionOf(call.kind), &result);
  if (r == nullptr) return result;
  GroupState& group = threadGroup();
  // A communicator without peerreduce's state is the real NCCL's alone: its calls go there untouched (and
  // make a group they are in a mixed one).
  const CallShape shape = call.comm != nullptr ? shapeOf(call) : CallShape{};
  const auto forwardThis = [&] {
    if (call.comm != nullptr) call.comm->counters.count(call.kind, false, shape.bytes);
    return noteRealResult(forwardCall(*r, call));
  };
  if (group.depth > 0 && group.forwarding) return forwardThis();
  // With the summary on, each call outside a group is timed from here to its return (the decision included).
  const bool timed = call.comm != nullptr && call.comm->settings.summary && group.depth == 0;
  const auto began = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  const auto timedOutcome = [&](bool taken, int outcome) {
    if (timed) {
      const auto spent = std::chrono::steady_clock::now() - began;
      call.comm->counters.time(
          taken, static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count()));
    }
    return outcome;
  };
  const TakeDecision decision =
      call.comm != nullptr ? decide(call, shape) : TakeDecision{false, TakeReason::kNoCommunicator};
  if (decision.take && call.count == 0 && rootFits(call)) {
    // A taken collective of no elements does nothing on either side (the C API returns before any work), in
    // a group too: it ends here, as cheaply as NCCL's own checks (nccl-tests' 8-byte reduce-scatter over
    // four ranks is one). A root out of range goes on, so the call fails as NCCL's would.
    call.comm->counters.count(call.kind, true, 0);
    return kSuccess;
  }
  if (group.depth > 0) {
    if (decision.take && group.kept.size() < kMaxKeptCalls) {
      group.kept.push_back(call);
      return kSuccess;
    }
    // The group is not all peerreduce's: what was kept goes into the real group first, in order.
    const int replayed = forwardGroupSoFar(*r);
    const int own = forwardThis();
    return replayed != kSuccess ? replayed : own;
  }
  if (!decision.take) return timedOutcome(false, forwardThis());
  return timedOutcome(true, runTaken(function, call, shape.bytes));
}

int Dispatcher::runTakenGroup(const char* function) {
  GroupState& group = threadGroup();
  const std::vector<CollectiveCall>& kept = group.kept;
  // Reused across groups, so a steady stream of groups allocates nothing after the first.
  thread_local std::vector<bool> done;
  thread_local std::vector<prBatchItem_t> items;
  thread_local std::vector<ShadowedComm*> simulated;
  done.assign(kept.size(), false);
  simulated.clear();
  for (const CollectiveCall& call : kept) {
    if (call.comm->peer.on_simulator && std::find(simulated.begin(), simulated.end(), call.comm) == simulated.end()) {
      simulated.push_back(call.comm);
    }
  }
  int outcome = kSuccess;
  for (std::size_t i = 0; i < kept.size() && outcome == kSuccess; ++i) {
    if (done[i]) continue;
    const CollectiveCall& call = kept[i];
    if (call.kind != CallKind::kAllReduce) {
      done[i] = true;
      call.comm->counters.count(call.kind, true, shapeOf(call).bytes);
      const prResult_t result = takeCall(call);
      if (result != prSuccess) outcome = recordPeerreduceFailure(function, result);
      continue;
    }
    // Every allreduce of this one's batch, in order, at the place of the first.
    items.clear();
    for (std::size_t j = i; j < kept.size(); ++j) {
      if (done[j] || !sameBatch(call, kept[j])) continue;
      done[j] = true;
      kept[j].comm->counters.count(CallKind::kAllReduce, true, shapeOf(kept[j]).bytes);
      items.push_back(prBatchItem_t{kept[j].send, kept[j].recv, kept[j].count});
    }
    void* stream = call.comm->peer.on_simulator ? nullptr : call.stream;
    for (std::size_t first = 0; first < items.size() && outcome == kSuccess; first += kMaxBatchItems) {
      const std::size_t n = std::min(kMaxBatchItems, items.size() - first);
      const prResult_t result = prAllReduceBatch(items.data() + first, n, toPrDataType(call.dtype), toPrRedOp(call.op),
                                                 call.comm->peer.comm, stream);
      if (result != prSuccess) outcome = recordPeerreduceFailure(function, result);
    }
  }
  // Every simulated communicator of the group synchronizes, after a failure too (see runTaken).
  for (ShadowedComm* comm : simulated) {
    const prResult_t synced = prCommSynchronize(comm->peer.comm, nullptr);
    if (outcome == kSuccess && synced != prSuccess) outcome = recordPeerreduceFailure(function, synced);
  }
  return outcome;
}

int Dispatcher::groupStart() {
  return guarded("ncclGroupStart", [&] {
    int result = kSuccess;
    RealNccl* r = real(NcclFunction::kGroupStart, &result);
    if (r == nullptr) return result;
    // The real group opens with ours, so whatever the group ends up forwarding lands inside it.
    result = noteRealResult(r->groupStart());
    if (result != kSuccess) return result;
    GroupState& group = threadGroup();
    if (group.depth++ == 0) {
      group.forwarding = false;
      group.kept.clear();
      group.created.clear();
    }
    return kSuccess;
  });
}

int Dispatcher::groupEnd() { return endGroup("ncclGroupEnd", false, nullptr); }

int Dispatcher::groupSimulateEnd(void* sim_info) { return endGroup("ncclGroupSimulateEnd", true, sim_info); }

int Dispatcher::endGroup(const char* function, bool simulate, void* sim_info) {
  return guarded(function, [&] {
    int result = kSuccess;
    RealNccl* r = real(simulate ? NcclFunction::kGroupSimulateEnd : NcclFunction::kGroupEnd, &result);
    if (r == nullptr) return result;
    const auto endReal = [&] { return noteRealResult(simulate ? r->groupSimulateEnd(sim_info) : r->groupEnd()); };
    GroupState& group = threadGroup();
    // Without a group the real NCCL reports the misuse itself.
    if (group.depth == 0) return endReal();
    // A simulated end runs nothing: NCCL estimates the whole group, so the calls kept for peerreduce go
    // into the real group first, and peerreduce runs none of them.
    if (simulate && group.depth == 1 && !group.forwarding && !group.kept.empty()) {
      result = forwardGroupSoFar(*r, false);
    }
    --group.depth;
    const int ended = endReal();
    if (group.depth > 0) return ended;
    if (result == kSuccess) result = ended;
    if (!group.forwarding && !group.kept.empty()) {
      const int taken = runTakenGroup(function);
      if (result == kSuccess) result = taken;
    }
    group.kept.clear();
    group.forwarding = false;
    std::vector<std::shared_ptr<ShadowedComm>> held;
    held.swap(group.created);
    // A communicator the application ended (from another thread) before the group's end is left out.
    std::vector<ShadowedComm*> created;
    for (const auto& comm : held) {
      if (!comm->released.load(std::memory_order_acquire)) created.push_back(comm.get());
    }
    if (created.empty() || (ended != kSuccess && ended != toInt(NcclResult::kInProgress))) return result;
    for (ShadowedComm* comm : created) {
      const int ready = waitReady(function, *r, comm->real);
      if (ready == kSuccess) continue;
      // The handles are the application's already: they keep forwarding, and the group reports why.
      for (ShadowedComm* unfinished : created) unfinished->peer.absent_reason = "its real creation did not finish";
      return ready;
    }
    const Status completed = completeCreations(*r, created);
    if (!completed.isOk()) {
      // The handles are the application's already: they keep forwarding, and the group reports why.
      for (ShadowedComm* comm : created) {
        if (comm->peer.comm == nullptr && comm->peer.absent_reason.empty()) {
          comm->peer.absent_reason = "creating it failed: " + completed.message();
        }
      }
      const int failure = recordError(function, completed);
      if (result == kSuccess) result = failure;
    }
    return result;
  });
}

int Dispatcher::enqueue(CollectiveCall call, void* comm) {
  const char* function = callKindName(call.kind);
  return guarded(function, [&] {
    call.real_comm = comm;
    call.pin = ours(comm);
    call.comm = call.pin.get();
    return collective(function, call);
  });
}

int Dispatcher::allReduce(const void* send, void* recv, std::size_t count, int dtype, int op, void* comm,
                          void* stream) {
  return enqueue({CallKind::kAllReduce, nullptr, nullptr, send, recv, count, dtype, op, 0, stream, nullptr}, comm);
}

int Dispatcher::reduceScatter(const void* send, void* recv, std::size_t recvcount, int dtype, int op, void* comm,
                              void* stream) {
  return enqueue({CallKind::kReduceScatter, nullptr, nullptr, send, recv, recvcount, dtype, op, 0, stream, nullptr},
                 comm);
}

int Dispatcher::allGather(const void* send, void* recv, std::size_t sendcount, int dtype, void* comm, void* stream) {
  return enqueue({CallKind::kAllGather, nullptr, nullptr, send, recv, sendcount, dtype, 0, 0, stream, nullptr}, comm);
}

int Dispatcher::broadcast(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm,
                          void* stream) {
  return enqueue({CallKind::kBroadcast, nullptr, nullptr, send, recv, count, dtype, 0, root, stream, nullptr}, comm);
}

int Dispatcher::reduce(const void* send, void* recv, std::size_t count, int dtype, int op, int root, void* comm,
                       void* stream) {
  return enqueue({CallKind::kReduce, nullptr, nullptr, send, recv, count, dtype, op, root, stream, nullptr}, comm);
}

int Dispatcher::send(const void* send, std::size_t count, int dtype, int peer, void* comm, void* stream) {
  return enqueue({CallKind::kSend, nullptr, nullptr, send, nullptr, count, dtype, 0, peer, stream, nullptr}, comm);
}

int Dispatcher::recv(void* recv, std::size_t count, int dtype, int peer, void* comm, void* stream) {
  return enqueue({CallKind::kRecv, nullptr, nullptr, nullptr, recv, count, dtype, 0, peer, stream, nullptr}, comm);
}

int Dispatcher::bcast(void* buffer, std::size_t count, int dtype, int root, void* comm, void* stream) {
  return enqueue({CallKind::kBcast, nullptr, nullptr, buffer, buffer, count, dtype, 0, root, stream, nullptr}, comm);
}

int Dispatcher::alltoAll(const void* send, void* recv, std::size_t count, int dtype, void* comm, void* stream) {
  return enqueue({CallKind::kAlltoAll, nullptr, nullptr, send, recv, count, dtype, 0, 0, stream, nullptr}, comm);
}

int Dispatcher::gather(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm, void* stream) {
  return enqueue({CallKind::kGather, nullptr, nullptr, send, recv, count, dtype, 0, root, stream, nullptr}, comm);
}

int Dispatcher::scatter(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm,
                        void* stream) {
  return enqueue({CallKind::kScatter, nullptr, nullptr, send, recv, count, dtype, 0, root, stream, nullptr}, comm);
}

}  // namespace peerreduce::nccl
