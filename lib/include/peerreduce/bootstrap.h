// Bootstrap: how the ranks of a world find each other before they can share memory.
//
// Used at communicator creation (agreeing on the configuration, exchanging symmetric-memory records)
// and in recovery, never on the allreduce path of one machine (an operation across machines agrees on its
// steps' outcomes through its worlds' bootstraps: peerreduce/multi_machine.h). Every call is collective (all ranks call
// it in the same order) and bounded by a timeout: a rank that never arrives makes the others return kTimeout naming the
// missing ranks, instead of hanging.
//
// Implementations: InProcessBootstrap (ranks are threads of one process; createInProcessGroup) and,
// on builds with MPI, the MPI bootstrap (peerreduce/mpi_bootstrap.h).
//
// Thread safety: one thread per Bootstrap object; the objects of one in-process group are meant to be
// used from different threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "peerreduce/status.h"

namespace peerreduce {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Every rank contributes `mine` (the same length on every rank); `all` receives size() blocks,
  // block r from rank r. A rank that passes a different length makes every rank fail with kMismatch.
  virtual Status allGather(std::span<const std::byte> mine, std::span<std::byte> all,
                           std::chrono::milliseconds timeout) = 0;

  // Returns once every rank has entered, or kTimeout.
  virtual Status barrier(std::chrono::milliseconds timeout);
};

// `size` bootstraps for ranks 0..size-1 of one process; give each to the thread that plays that rank.
// size must be in 1..kMaxWorldSize (64).
StatusOr<std::vector<std::shared_ptr<Bootstrap>>> createInProcessGroup(int size);

}  // namespace peerreduce
