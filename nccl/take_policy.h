// Which NCCL calls peerreduce takes: a pure function of what every rank of a communicator knows alike
// (the call's kind, data type, operator and size, the communicator's settings and take table, compared at
// creation, whether it has a peerreduce communicator, that communicator's agreed architecture and world
// size, and its selection), so every rank decides the same and no rank runs a collective in peerreduce
// while another runs it in NCCL. Nothing rank-specific (pointers, rank numbers, local failures, this
// rank's own device) is an input.
//
// The table (docs/NCCL.md says why each row):
//   mode none, or no peerreduce communicator             -> forward
//   ncclReduce, ncclSend, ncclRecv, ncclAlltoAll,
//   ncclGather, ncclScatter                               -> forward (peerreduce has no such collective)
//   a data type peerreduce lacks (unknown values)         -> forward
//   avg with PEERREDUCE_NCCL_TAKE_AVG=0                   -> forward (taken like sum by default)
//   created (premul-sum) or unknown operators             -> forward (only NCCL knows them)
//   mode all                                              -> take
//   mode auto: larger than max_bytes (if set)             -> forward (a cap over the take table)
//   mode auto: the take table (take_table.h) has rows for the collective, arch, world size and dtype class:
//     a row measured peerreduce faster                    -> take
//     a row measured NCCL faster, or no row for the size  -> forward
//   mode auto: no rows (unmeasured): an allreduce of at most kUnmeasuredTakeMaxBytes -> take, else forward
//     (small allreduces won on every machine measured; nothing else is taken without a measurement)
//   mode auto: a taken allreduce whose selection is the ring -> forward (within a node NCCL runs a ring
//     too, tuned)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "nccl/take_table.h"

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

// 256 KiB: an unmeasured case (another GPU, world size or dtype) takes allreduces up to this size. At
// and below it peerreduce's allreduce took at most 0.65 of NCCL's time on every machine measured (2 and 4
// x H200: 0.41-0.65), far from the margin; above it the ratio rose to 0.88-0.94 at 1 MiB, too near 1 to
// assume for a machine nobody measured.
inline constexpr std::uint64_t kUnmeasuredTakeMaxBytes = std::uint64_t{256} << 10;

struct TakeSettings {
  TakeMode mode = TakeMode::kAuto;
  // PEERREDUCE_NCCL_MAX_BYTES: none by default, so the take table alone decides at every size (it forwards
  // what no measurement shows peerreduce winning); a user's cap below it.
  std::uint64_t max_bytes = UINT64_MAX;
  bool take_avg = true;  // PEERREDUCE_NCCL_TAKE_AVG
};

// What every rank knows alike about the communicator a call is on.
struct CommFacts {
  bool has_communicator = false;  // a usable peerreduce side
  std::string_view architecture;  // the side's take-table key (takeTableArchitecture: "sm_90", "sm_90-host")
  int world_size = 1;
  const TakeTable* table = nullptr;  // the take table's rows (null: none, every case unmeasured)
};

struct CallShape {
  CallKind kind = CallKind::kAllReduce;
  int dtype = 0;          // an ncclDataType_t value
  int op = 0;             // an ncclRedOp_t value (reducing kinds only)
  std::size_t bytes = 0;  // the whole collective's buffer (nccl-tests' size); SIZE_MAX when it overflows
};

enum class TakeReason : int {
  kTaken,              // auto: a take-table row measured peerreduce faster
  kTakenAll,           // mode all
  kModeNone,           // PEERREDUCE_NCCL_TAKE=none
  kNoCommunicator,     // this communicator has no peerreduce side (why: the communicator's own reason)
  kNotPeerreduceKind,  // ncclReduce, ncclSend, ncclRecv, ncclAlltoAll, ncclGather, ncclScatter
  kDataType,           // no peerreduce type
  kAverage,            // avg with PEERREDUCE_NCCL_TAKE_AVG=0
  kOtherOperator,      // created or unknown operator
  kTooLarge,           // auto: above max_bytes
  kRingSelected,       // auto: peerreduce's selection for the size is the ring
  kTakenUnmeasured,    // auto: no rows; an allreduce of at most kUnmeasuredTakeMaxBytes
  kNcclMeasured,       // auto: a take-table row measured NCCL faster, or peerreduce within the margin
  kUnmeasured,         // auto: no row shows peerreduce faster (rows for other sizes only, or none)
};
// One phrase saying why, for the log line.
const char* takeReasonText(TakeReason reason);

struct TakeDecision {
  bool take = false;
  TakeReason reason = TakeReason::kModeNone;
};

// `selects_ring(bytes)`: whether peerreduce's allreduce selection for that size is the ring; asked only in
// auto mode, for an allreduce that every other row takes.
TakeDecision decideTake(const TakeSettings& settings, const CommFacts& comm, const CallShape& call,
                        const std::function<bool(std::size_t bytes)>& selects_ring);

// The collective a call kind is in the take table (ncclBcast is a broadcast); nullopt for kinds peerreduce
// does not run.
std::optional<Collective> takeTableCollective(CallKind kind);

}  // namespace peerreduce::nccl
