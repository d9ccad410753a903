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
      return "peerreduce runs this type, operator and size";
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
      return "avg is taken only with PEERREDUCE_NCCL_TAKE_AVG=1 (not yet compared with NCCL's on GPUs)";
    case TakeReason::kOtherOperator:
      return "a created or unknown operator only NCCL knows";
    case TakeReason::kTooLarge:
      return "larger than PEERREDUCE_NCCL_MAX_BYTES";
    case TakeReason::kRingSelected:
      return "peerreduce's selection is the ring, which NCCL runs as well";
  }
  return "unknown reason";
}

namespace {

bool reduces(CallKind kind) { return kind == CallKind::kAllReduce || kind == CallKind::kReduceScatter; }

}  // namespace

TakeDecision decideTake(const TakeSettings& settings, bool has_communicator, const CallShape& call,
                        const std::function<bool(std::size_t bytes)>& selects_ring) {
  if (settings.mode == TakeMode::kNone) return {false, TakeReason::kModeNone};
  if (!has_communicator) return {false, TakeReason::kNoCommunicator};
  switch (call.kind) {
    case CallKind::kReduce:
    case CallKind::kSend:
    case CallKind::kRecv:
    case CallKind::kAlltoAll:
    case CallKind::kGather:
    case CallKind::kScatter:
      return {false, TakeReason::kNotPeerreduceKind};
    case CallKind::kAllReduce:
    case CallKind::kReduceScatter:
    case CallKind::kAllGather:
    case CallKind::kBroadcast:
    case CallKind::kBcast:
      break;
  }
  if (!peerreduceDataType(call.dtype)) return {false, TakeReason::kDataType};
  if (reduces(call.kind)) {
    const bool average = call.op == static_cast<int>(NcclRedOp::kAvg);
    if (average && !settings.take_avg) return {false, TakeReason::kAverage};
    if (!average && !peerreduceReduceOp(call.op)) return {false, TakeReason::kOtherOperator};
  }
  if (settings.mode == TakeMode::kAll) return {true, TakeReason::kTakenAll};
  if (call.bytes > settings.max_bytes) return {false, TakeReason::kTooLarge};
  if (call.kind == CallKind::kAllReduce && selects_ring && selects_ring(call.bytes)) {
    return {false, TakeReason::kRingSelected};
  }
  return {true, TakeReason::kTaken};
}

}  // namespace peerreduce::nccl
