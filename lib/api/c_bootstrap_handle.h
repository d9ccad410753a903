// What a prBootstrap_t points at (internal): the rendezvous, and where the communicators made with it
// run. Shared by the C API (lib/api/c_api_bootstrap.cc), the simulator's half (sim/c_api_sim.cc) and the
// MPI library's (lib/api/c_api_mpi.cc).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "api/handle_registry.h"
#include "api/split_placement.h"
#include "peerreduce/bootstrap.h"
#include "peerreduce/config.h"
#include "peerreduce/peerreduce.h"
#include "peerreduce/status.h"
#include "peerreduce/transport.h"

struct prBootstrap {
  std::shared_ptr<peerreduce::Bootstrap> bootstrap;
  // Where communicators made with this bootstrap run. Empty: on a GPU (the C API's default factory).
  peerreduce::capi::TransportFactory transports;
  // What those transports live in (a simulated world), kept alive by every communicator made here.
  std::shared_ptr<const void> owner;
  std::string describe;  // "application callbacks", "MPI", "simulated world"
  // Where the children of a prCommSplit of communicators made here run. Empty: on GPUs.
  peerreduce::capi::SplitPlacement placement;
};

namespace peerreduce::capi {

HandleRegistry& liveBootstraps();

// What an error about a bootstrap argument tells the caller to pass instead.
inline constexpr const char* kBootstrapHint =
    "pass a bootstrap made by prBootstrapCreate, prBootstrapFromMpi or prSimWorldBootstrap";

// The transport of rank `rank` of `nranks` for a communicator made with `bootstrap`: the bootstrap's
// factory, else a GPU: `device` when it is one (a shrunk communicator keeps its own), else the one
// Config::device names (resolveGpuDevice, with the local rank found through the bootstrap), reported in
// *device_used (-1 for a factory's transport). Collective: every rank learns whether every rank got its
// transport, so one that could not fails the others at once, naming it.
StatusOr<std::shared_ptr<Transport>> transportFor(prBootstrap& bootstrap, int rank, int nranks, const Config& config,
                                                  int device, int* device_used);

// Registers `made` as a live handle and hands it to the caller (never throws after the registry took it).
prBootstrap_t publishBootstrap(std::unique_ptr<prBootstrap> made);

}  // namespace peerreduce::capi
