// peerreduce's side of an NCCL communicator: the prComm_t the taken calls run on, made collectively over
// the real (shadow) communicator once it exists.
//
// Creation, on every rank alike:
// 1. nothing is made when PEERREDUCE_NCCL_TAKE=none, for more than kMaxWorldSize ranks, or where peerreduce
//    cannot run (a build without CUDA and without the simulator switch): every call is then forwarded;
// 2. the shadow bootstrap (shadow_bootstrap.h) compares the ranks' PEERREDUCE_NCCL_* settings (kMismatch)
//    and groups the ranks by machine: ranks on more than one machine make nothing either;
// 3. the communicator is created through the C API (prCommInitRank) on the placement's transports: the GPU
//    the NCCL communicator uses, or a simulated world shared by the ranks of this process
//    (PEERREDUCE_NCCL_SIMULATE, tests only);
// 4. every rank learns every rank's outcome: all created, or none keeps one. Then PEERREDUCE_NCCL_TAKE=all
//    fails the NCCL creation with the error, and auto goes on without a peerreduce side (a warning says why).
#pragma once

#include <string>

#include "nccl/nccl_settings.h"
#include "nccl/real_nccl.h"
#include "peerreduce/peerreduce.h"
#include "peerreduce/status.h"

namespace peerreduce::nccl {

struct PeerSide {
  prComm_t comm = nullptr;    // null: every call is forwarded
  std::string absent_reason;  // why there is none
  bool on_simulator = false;  // taken calls complete before they return (a simulated world has no streams)
  // The take table's key: the communicator's agreed architecture (rank 0's device, "sm_90", "simulator"),
  // with "-host" where a pair of its agreed topology is host-staged (takeTableArchitecture): every rank has
  // the same, so every rank looks up the same rows.
  std::string architecture;
};

struct PeerSideRequest {
  int rank = 0;
  int size = 1;
  int device = -1;            // the NCCL communicator's device
  void* real_comm = nullptr;  // the ready real communicator
  NcclSettings settings;
};

// The settings peerreduce's side is created with: the environment's (as prConfigInit reads them), its
// deadline the NCCL library's (NcclSettings::timeout_ms: PEERREDUCE_TIMEOUT_MS when set, else
// kNcclTimeoutMs). Errors: a malformed PEERREDUCE_* variable, named.
StatusOr<prConfig_t> peerSideConfig(const NcclSettings& settings);

// Collective over the real communicator's ranks. An error fails the NCCL creation; "nothing made" is a
// PeerSide without a communicator.
StatusOr<PeerSide> createPeerSide(RealNccl& real, const PeerSideRequest& request);

// Ends `side`'s communicator (abort first when `abort`); safe on a side without one.
void destroyPeerSide(PeerSide& side, bool abort);

}  // namespace peerreduce::nccl
