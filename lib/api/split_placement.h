// Where the children of a split run (internal): the hook through which a parent of one transport kind gives
// its children the same kind. A simulated parent's hook (sim/c_api_split_sim.cc) gives each child a
// simulated world of its own; a parent without one runs its children on GPUs (lib/api/c_api_split.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "peerreduce/bootstrap.h"
#include "peerreduce/config.h"
#include "peerreduce/status.h"
#include "peerreduce/transport.h"

namespace peerreduce::capi {

// Makes the transport of rank `rank` of `nranks` for a communicator with `config`.
using TransportFactory =
    std::function<StatusOr<std::shared_ptr<Transport>>(int rank, int nranks, const Config& config)>;

struct ChildPlace;

// Names one child the same way on every member: `split` (the same number on every rank of one call), the
// child's color, and its members (parent ranks in child rank order); `rank` is the caller's child rank.
struct ChildOfSplit {
  std::uint64_t split = 0;
  int color = 0;
  std::span<const int> members;
  int rank = 0;
};

// Where a child runs, for one of its ranks. Called on each member; members of one child must get
// transports of one world.
using SplitPlacement = std::function<StatusOr<ChildPlace>(const ChildOfSplit& child)>;

struct ChildPlace {
  TransportFactory transports;           // the child's transports
  std::shared_ptr<const void> owner;     // what they live in, held by the child's communicator
  std::shared_ptr<Bootstrap> bootstrap;  // the child's own bootstrap of this rank, used after the split
  SplitPlacement placement;              // where the child's own children run
};

}  // namespace peerreduce::capi
