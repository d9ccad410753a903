// peerreduce-bench's command line. No GPU code, so it is unit-tested on machines without one; a bad
// flag is a kInvalidArgument naming the flag and what it takes.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce::bench {

struct Options {
  Collective collective = Collective::kAllReduce;  // --coll
  int root = 0;                                    // --root: broadcast's source rank
  std::size_t min_bytes = 4 << 10;                 // sizes in nccl-tests' size column
  std::size_t max_bytes = std::size_t{256} << 20;
  int step_factor = 4;
  DataType dtype = DataType::kFloat32;
  std::vector<Algorithm> algorithms = {Algorithm::kAuto};
  int iters = 20;
  int repeats = 5;
  int warmup = 3;
  std::string nccl_path;
  std::string json_path;
  std::string csv_path;
  bool in_place = true;
  bool profile = false;                    // also run every size eagerly with the profiler on and print its summary
  bool algorithm_given = false;            // --algo: overrides PEERREDUCE_ALGO (or the collective's own setting)
  std::optional<std::string> link_mask;    // --link-mask: overrides PEERREDUCE_LINK_MASK
  bool nccl_p2p_disable = false;           // --nccl-p2p-disable: NCCL_P2P_DISABLE=1 for NCCL's communicator
  int batch = 0;                           // tensors per batch; 0: no batch measurements
  std::size_t batch_max_bytes = 64 << 10;  // largest tensor of a batch
  bool ce_probe = false;                   // --ce: the copy-engine probe only (ce_probe.h)
  // --skew-us: every rank but 0 starts each timed replay this much later than rank 0, as ranks of an
  // application do (eager launches, a barrier over TCP); 0 starts them together after MPI_Barrier.
  int skew_us = 0;
  // --eager: each timing is `iters` calls launched back to back, as an application's eager loop and
  // nccl-tests do (the host's cost of a call included), instead of one replay of a graph of them.
  bool eager = false;
  // --machines M: the world split into M machines of equal rank counts (ranks in order, one host playing
  // them), a MultiMachineCommunicator over them (MPI between machines) timed with each strategy
  // (hierarchical, flat) beside NCCL on the same GPUs. Eager only: the step between machines runs on
  // the host before the call returns, which a graph cannot capture. 0: one machine, a Communicator.
  int machines = 0;
};

// Parses argv[1..argc) for a world of `ranks` (a --root outside it is refused). --algo all lists the
// algorithms the collective has.
StatusOr<Options> parseOptions(int argc, const char* const* argv, int ranks);

}  // namespace peerreduce::bench
