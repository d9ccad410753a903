#include "nccl/take_policy.h"

#include "nccl/type_mapping.h"

namespace peerreduce::nccl {

const char* takeModeName(TakeMode mode) {
  switch (mode) {
    case TakeMode::kAuto:
      return "auto";
    case TakeMode::kAll:
      return "all";
    case TakeMode::kNone:
      return "none";
  }
  return "unknown";
}

const char* callKindName(CallKind kind) {
  switch (kind) {
    case CallKind::kAllReduce:
      return "ncclAllReduce";
    case CallKind::kReduceScatter:
      return "ncclReduceScatter";
    case CallKind::kAllGather:
      return "ncclAllGather";
    case CallKind::kBroadcast:
      return "ncclBroadcast";
    case CallKind::kBcast:
      return "ncclBcast";
    case CallKind::kReduce:
      return "ncclReduce";
    case CallKind::kSend:
      return "ncclSend";
    case CallKind::kRecv:
      return "ncclRecv";
    case CallKind::kAlltoAll:
      return "ncclAlltoAll";
    case CallKind::kGather:
      return "ncclGather";
    case CallKind::kScatter:
      return "ncclScatter";
  }
  return "unknown call";
}

const char* takeReasonText(TakeReason reason) {
  switch (reason) {
    case TakeReason::kTaken:
      return "the take table measured peerreduce faster at this size";
    case TakeReason::kTakenAll:
      return "PEERREDUCE_NCCL_TAKE=all";
    case TakeReason::kModeNone:
      return "PEERREDUCE_NCCL_TAKE=none";
    case TakeReason::kNoCommunicator:
      return "this communicator has no peerreduce side";
    case TakeReason::kNotPeerreduceKind:
      return "peerreduce has no such collective";
    case TakeReason::kDataType:
      return "peerreduce has no such data type";
    case TakeReason::kAverage:
      return "avg is forwarded: PEERREDUCE_NCCL_TAKE_AVG=0";
    case TakeReason::kOtherOperator:
      return "a created or unknown operator only NCCL knows";
    case TakeReason::kTooLarge:
      return "larger than PEERREDUCE_NCCL_MAX_BYTES";
    case TakeReason::kRingSelected:
      return "peerreduce's selection is the ring, which NCCL runs as well";
    case TakeReason::kTakenUnmeasured:
      return "not measured here; allreduces up to 256 KiB are taken (peerreduce won them on every GPU measured)";
    case TakeReason::kNcclMeasured:
      return "the take table measured NCCL faster (or peerreduce within the margin) at this size";
    case TakeReason::kUnmeasured:
      return "no measurement shows peerreduce faster for this collective, GPU, world size, type and size";
  }
  return "unknown reason";
}

namespace {

bool reduces(CallKind kind) { return kind == CallKind::kAllReduce || kind == CallKind::kReduceScatter; }

// Auto mode's answer from the measurements, for a call every other row takes.
TakeDecision measuredDecision(const CommFacts& comm, const CallShape& call) {
  const std::optional<Collective> collective = takeTableCollective(call.kind);
  const std::optional<DtypeClass> dtypes = dtypeClassOf(call.dtype);
  if (!collective || !dtypes) return {false, TakeReason::kUnmeasured};  // not reached: filtered before
  const TableAnswer answer =
      comm.table != nullptr ? comm.table->lookup(*collective, comm.architecture, comm.world_size, *dtypes, call.bytes)
                            : TableAnswer::kUnmeasured;
  switch (answer) {
    case TableAnswer::kPeerreduce:
      return {true, TakeReason::kTaken};
    case TableAnswer::kNccl:
      return {false, TakeReason::kNcclMeasured};
    case TableAnswer::kOutsideRows:
      return {false, TakeReason::kUnmeasured};
    case TableAnswer::kUnmeasured:
      break;
  }
  if (*collective == Collective::kAllReduce && call.bytes <= kUnmeasuredTakeMaxBytes) {
    return {true, TakeReason::kTakenUnmeasured};
  }
  return {false, TakeReason::kUnmeasured};
}

}  // namespace

std::optional<Collective> takeTableCollective(CallKind kind) {
  switch (kind) {
    case CallKind::kAllReduce:
      return Collective::kAllReduce;
    case CallKind::kReduceScatter:
      return Collective::kReduceScatter;
    case CallKind::kAllGather:
      return Collective::kAllGather;
    case CallKind::kBroadcast:
    case CallKind::kBcast:
      return Collective::kBroadcast;
    case CallKind::kReduce:
    case CallKind::kSend:
    case CallKind::kRecv:
    case CallKind::kAlltoAll:
    case CallKind::kGather:
    case CallKind::kScatter:
      return std::nullopt;
  }
  return std::nullopt;
}

TakeDecision decideTake(const TakeSettings& settings, const CommFacts& comm, const CallShape& call,
                        const std::function<bool(std::size_t bytes)>& selects_ring) {
  if (settings.mode == TakeMode::kNone) return {false, TakeReason::kModeNone};
  if (!comm.has_communicator) return {false, TakeReason::kNoCommunicator};
  if (!takeTableCollective(call.kind)) return {false, TakeReason::kNotPeerreduceKind};
  if (!peerreduceDataType(call.dtype)) return {false, TakeReason::kDataType};
  if (reduces(call.kind)) {
    const bool average = call.op == static_cast<int>(NcclRedOp::kAvg);
    if (average && !settings.take_avg) return {false, TakeReason::kAverage};
    if (!average && !peerreduceReduceOp(call.op)) return {false, TakeReason::kOtherOperator};
  }
  if (settings.mode == TakeMode::kAll) return {true, TakeReason::kTakenAll};
  if (call.bytes > settings.max_bytes) return {false, TakeReason::kTooLarge};
  const TakeDecision measured = measuredDecision(comm, call);
  if (!measured.take) return measured;
  if (call.kind == CallKind::kAllReduce && selects_ring && selects_ring(call.bytes)) {
    return {false, TakeReason::kRingSelected};
  }
  return measured;
}

}  // namespace peerreduce::nccl
