// The C handle of a communicator that spans machines (internal): what a prMultiComm_t points at. Shared
// by lib/api/c_api_multi_machine.cc (the calls) and the functions that create one (the simulator's in
// sim/c_api_multi_machine_sim.cc).
#pragma once

#include <memory>

#include "api/handle_registry.h"
#include "peerreduce/multi_machine.h"
#include "peerreduce/peerreduce.h"

struct prMultiComm {
  std::unique_ptr<peerreduce::MultiMachineCommunicator> comm;
  // What its machine and network worlds live in (a simulated multi-machine world), held so that an owner
  // destroyed too early cannot leave this communicator dangling.
  std::shared_ptr<const void> owner;
};

namespace peerreduce::capi {

// The live multi-machine communicators, checked as liveComms() checks communicators.
HandleRegistry& liveMultiComms();

inline constexpr const char* kMultiCommHint =
    "pass a communicator made by prMultiCommInitSimRank or prMultiCommInitSimAll";

}  // namespace peerreduce::capi
