#include "faults/fault_plan.h"

#include <array>

namespace peerreduce::faults {
namespace {

constexpr std::array<std::string_view, kFaultKindCount> kNames = {
    "link-down",       "link-down-one-way", "stall",          "stall-forever",
    "crash",           "ipc-open-failure",  "pool-exhausted", "pool-exhausted-persistent",
    "corrupt-record",  "truncated-record",  "delayed-signal", "host-link-down",
    "host-copy-stall", "pinned-exhausted",  "probe-failure",  "probe-failure-persistent"};

}  // namespace

std::string_view faultKindName(FaultKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < kNames.size() ? kNames[i] : std::string_view("?");
}

StatusOr<FaultKind> parseFaultKind(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<FaultKind>(i);
  }
  return invalidArgumentError("unknown fault kind '" + std::string(name) + "'");
}

bool isCreationFault(FaultKind kind) {
  switch (kind) {
    case FaultKind::kIpcOpenFailure:
    case FaultKind::kPoolExhaustedTransient:
    case FaultKind::kPoolExhaustedPersistent:
    case FaultKind::kCorruptRecord:
    case FaultKind::kTruncatedRecord:
    case FaultKind::kProbeFailure:
    case FaultKind::kProbeFailurePersistent:
      return true;
    default:
      return false;
  }
}

bool isPermanentFault(FaultKind kind) {
  return kind == FaultKind::kLinkDown || kind == FaultKind::kLinkDownOneWay || kind == FaultKind::kStallForever ||
         kind == FaultKind::kCrash || kind == FaultKind::kHostLinkDown;
}

bool isHostStagedFault(FaultKind kind) {
  return kind == FaultKind::kHostLinkDown || kind == FaultKind::kHostCopyStall || kind == FaultKind::kPinnedExhausted;
}

bool isProbeFault(FaultKind kind) {
  return kind == FaultKind::kProbeFailure || kind == FaultKind::kProbeFailurePersistent;
}

std::string Fault::describe() const {
  std::string out(faultKindName(kind));
  switch (kind) {
    case FaultKind::kLinkDown:
    case FaultKind::kHostLinkDown:
      return out + " " + std::to_string(rank) + "<->" + std::to_string(peer) + " at op " + std::to_string(op) +
             " step " + std::to_string(step);
    case FaultKind::kLinkDownOneWay:
      return out + " " + std::to_string(rank) + "->" + std::to_string(peer) + " at op " + std::to_string(op) +
             " step " + std::to_string(step);
    case FaultKind::kStall:
    case FaultKind::kHostCopyStall:
      return out + " rank " + std::to_string(rank) + " for " + std::to_string(static_cast<long long>(duration_us)) +
             " us at op " + std::to_string(op);
    case FaultKind::kPinnedExhausted:
      return out + " rank " + std::to_string(rank) + " at op " + std::to_string(op);
    case FaultKind::kStallForever:
    case FaultKind::kCrash:
      return out + " rank " + std::to_string(rank) + " at op " + std::to_string(op) + " step " + std::to_string(step);
    case FaultKind::kDelayedSignal:
      return out + " " + std::to_string(rank) + "->" + std::to_string(peer) + " by " +
             std::to_string(static_cast<long long>(duration_us)) + " us at op " + std::to_string(op);
    case FaultKind::kIpcOpenFailure:
    case FaultKind::kCorruptRecord:
    case FaultKind::kTruncatedRecord:
      return out + " rank " + std::to_string(rank) + " from rank " + std::to_string(peer) + " at creation";
    case FaultKind::kProbeFailure:
    case FaultKind::kProbeFailurePersistent:
      return out + " rank " + std::to_string(rank) + " of rank " + std::to_string(peer) + " at creation";
    case FaultKind::kPoolExhaustedTransient:
    case FaultKind::kPoolExhaustedPersistent:
      return out + " rank " + std::to_string(rank) + " at creation";
  }
  return out;
}

std::string FaultMix::describe() const {
  std::string out;
  for (int i = 0; i < kFaultKindCount; ++i) {
    if (!has(static_cast<FaultKind>(i))) continue;
    if (!out.empty()) out += ",";
    out += faultKindName(static_cast<FaultKind>(i));
  }
  return out.empty() ? "none" : out;
}

}  // namespace peerreduce::faults
