// The simulator's C handle (internal): what a prSimWorld_t points at, and the checks its creation functions
// share (sim/c_api_sim.cc, sim/c_api_multi_machine_sim.cc). Also used by the
// tests that reach through a handle to its world.
#pragma once

#include <exception>
#include <memory>
#include <new>
#include <string>

#include "api/c_api_internal.h"
#include "peerreduce/peerreduce_sim.h"
#include "peerreduce/simulator.h"

struct prSimWorld {
  std::shared_ptr<peerreduce::sim::SimWorld> world;
};

namespace peerreduce::capi {

// prSuccess when `rank` is one of a simulated world's `size` ranks, else prInvalidArgument naming both.
inline prResult_t checkSimRank(const char* function, int rank, int size) noexcept {
  if (rank >= 0 && rank < size) return prSuccess;
  return recordError(function, ErrorCode::kInvalidArgument,
                     {"rank ", std::to_string(rank), " is outside 0..", std::to_string(size - 1),
                      " for a simulated world of ", std::to_string(size), " ranks"});
}

// Runs one rank's creation, which may run on a thread of its own where no exception may escape: the
// body's Status, or an exception turned into one naming the rank.
template <typename Body>
Status createRankGuarded(int rank, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return outOfMemoryError("rank " + std::to_string(rank) + ": out of host memory while creating the communicator");
  } catch (const std::exception& e) {
    return internalError("rank " + std::to_string(rank) + ": unexpected exception while creating the communicator (" +
                         e.what() + "); please report it");
  }
}

// Communicators made with a bootstrap carrying this factory run on `world`'s transports.
TransportFactory simTransports(const std::shared_ptr<sim::SimWorld>& world);

// Where the children of a split of a communicator on `world` run: each child on a simulated world of its
// own (sim/c_api_split_sim.cc).
SplitPlacement simSplitPlacement(const std::shared_ptr<sim::SimWorld>& world);

}  // namespace peerreduce::capi
