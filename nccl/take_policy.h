// Which NCCL calls peerreduce takes: a pure function of what every rank of a communicator knows alike
// (the call's kind, data type, operator and size, the communicator's settings, whether it has a
// peerreduce communicator, and that communicator's selection), so every rank decides the same and no rank
// runs a collective in peerreduce while another runs it in NCCL. Nothing rank-specific (pointers, rank
// numbers, local failures) is an input.
//
// The table (docs/NCCL.md says why each row):
//   mode none, or no peerreduce communicator             -> forward
//   ncclReduce, ncclSend, ncclRecv, ncclAlltoAll,
//   ncclGather, ncclScatter                               -> forward (peerreduce has no such collective)
//   a data type peerreduce lacks (8-bit floats, unknown)  -> forward
//   avg, unless PEERREDUCE_NCCL_TAKE_AVG=1                -> forward (not yet compared with NCCL on GPUs)
//   created (premul-sum) or unknown operators             -> forward (only NCCL knows them)
//   mode all                                              -> take
//   mode auto: larger than max_bytes                      -> forward
//   mode auto: an allreduce whose selection is the ring   -> forward (within a node NCCL runs a ring too, tuned)
//   mode auto: otherwise                                  -> take
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace peerreduce::nccl {

// PEERREDUCE_NCCL_TAKE; the numbers are the setting's choice values (lib/config/settings_registry.cc).
enum class TakeMode : int { kAuto = 0, kAll = 1, kNone = 2 };
const char* takeModeName(TakeMode mode);

// The collectives and point-to-point calls a decision is made for (the ones with data). kBcast is
// ncclBcast, NCCL's in-place broadcast, decided and run as a broadcast but forwarded under its own name.
enum class CallKind : int {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kBcast,
  kReduce,
  kSend,
  kRecv,
  kAlltoAll,
  kGather,
  kScatter,
};
inline constexpr int kCallKindCount = static_cast<int>(CallKind::kScatter) + 1;
// "ncclAllReduce", ...
const char* callKindName(CallKind kind);

struct TakeSettings {
  TakeMode mode = TakeMode::kAuto;
  std::uint64_t max_bytes = std::uint64_t{16} << 20;  // PEERREDUCE_NCCL_MAX_BYTES' default
  bool take_avg = false;                              // PEERREDUCE_NCCL_TAKE_AVG
};

struct CallShape {
  CallKind kind = CallKind::kAllReduce;
  int dtype = 0;          // an ncclDataType_t value
  int op = 0;             // an ncclRedOp_t value (reducing kinds only)
  std::size_t bytes = 0;  // the whole collective's buffer (nccl-tests' size); SIZE_MAX when it overflows
};

enum class TakeReason : int {
  kTaken,              // auto: peerreduce's kind, type, operator and size
  kTakenAll,           // mode all
  kModeNone,           // PEERREDUCE_NCCL_TAKE=none
  kNoCommunicator,     // this communicator has no peerreduce side (why: the communicator's own reason)
  kNotPeerreduceKind,  // ncclReduce, ncclSend, ncclRecv, ncclAlltoAll, ncclGather, ncclScatter
  kDataType,           // no peerreduce type
  kAverage,            // avg without PEERREDUCE_NCCL_TAKE_AVG=1
  kOtherOperator,      // created or unknown operator
  kTooLarge,           // auto: above max_bytes
  kRingSelected,       // auto: peerreduce's selection for the size is the ring
};
// One phrase saying why, for the log line.
const char* takeReasonText(TakeReason reason);

struct TakeDecision {
  bool take = false;
  TakeReason reason = TakeReason::kModeNone;
};

// `selects_ring(bytes)`: whether peerreduce's allreduce selection for that size is the ring; asked only in
// auto mode, for an allreduce that every other row takes.
TakeDecision decideTake(const TakeSettings& settings, bool has_communicator, const CallShape& call,
                        const std::function<bool(std::size_t bytes)>& selects_ring);

}  // namespace peerreduce::nccl
