// Faults: what can go wrong, where it strikes, and the mix a run is allowed to draw from.
//
// A Fault is data, so a schedule can be printed, compared and replayed; the FaultyTransport
// (faulty_transport.h) turns faults into errors at named sites of the Transport interface, and the
// campaign (sim/campaign/) draws schedules from a seed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "peerreduce/status.h"

namespace peerreduce::faults {

enum class FaultKind : int {
  kLinkDown = 0,             // link rank<->peer stops working, both directions
  kLinkDownOneWay,           // only rank->peer stops
  kStall,                    // rank is descheduled for duration_us of virtual time, then goes on
  kStallForever,             // rank stops making progress and never resumes (but does not exit)
  kCrash,                    // rank dies `step` actions into operation `op`
  kIpcOpenFailure,           // rank cannot open peer's memory handle at creation
  kPoolExhaustedTransient,   // rank's symmetric memory cannot be opened once, then can
  kPoolExhaustedPersistent,  // ... cannot be opened until the fault is healed
  kCorruptRecord,            // the memory record rank receives from peer arrives with flipped bytes
  kTruncatedRecord,          // ... arrives cut short
  kDelayedSignal,            // every signal rank->peer arrives duration_us late (virtual time)
  // Host-staged links (the link mask's host: entries; faults_host_staged.cc has what they do):
  kHostLinkDown,     // the host-staged path rank<->peer stops, both directions
  kHostCopyStall,    // rank's next copy through pinned host memory stalls for duration_us (virtual time)
  kPinnedExhausted,  // rank's pinned host pool is taken up to its limit until the fault is healed
  // Access probes at creation (faults_probe.cc): rank's probe of peer's memory fails although the
  // mapping opened, as on a machine whose peer-to-peer path is broken.
  kProbeFailure,            // ... over a direct path only: the pair falls back to a host-staged link
  kProbeFailurePersistent,  // ... over the host-staged path too: creation fails after the fallback
};
inline constexpr int kFaultKindCount = 16;
// The kinds that only strike host-staged links or their pinned memory.
bool isHostStagedFault(FaultKind kind);
// The kinds that fail access probes at creation.
bool isProbeFault(FaultKind kind);

std::string_view faultKindName(FaultKind kind);
StatusOr<FaultKind> parseFaultKind(std::string_view name);
// Faults that strike while a communicator is created (memory exchange) rather than during an operation.
bool isCreationFault(FaultKind kind);
// Faults after which the rank (or link) is gone for good: survivors must shrink around it.
bool isPermanentFault(FaultKind kind);

struct Fault {
  FaultKind kind = FaultKind::kCrash;
  int rank = 0;
  int peer = -1;             // the other end of a link, the peer whose record or handle is bad
  int op = 0;                // index of the operation it strikes in (creation faults: ignored)
  std::uint64_t step = 0;    // actions of that operation before it strikes (crash, link down)
  double duration_us = 0.0;  // stall or signal delay, virtual microseconds

  std::string describe() const;  // "crash rank 2 at op 1 step 5"
};

// Which kinds a run may draw (swarm testing: each run gets its own mix, so rare interactions
// between a few kinds are not drowned by all the others).
struct FaultMix {
  std::uint32_t enabled = 0;  // bit i: FaultKind(i)
  bool has(FaultKind kind) const { return (enabled >> static_cast<int>(kind)) & 1u; }
  void enable(FaultKind kind) { enabled |= 1u << static_cast<int>(kind); }
  std::string describe() const;  // "crash,stall,link-down" or "none"
};

}  // namespace peerreduce::faults
