// The state behind a Communicator (internal).
#pragma once

#include <array>
#include <optional>
#include <memory>

#include <string>
#include <vector>

#include "api/candidates.h"
#include "peerreduce/communicator.h"
#include "select/selector.h"
#include "select/tuning_table.h"

namespace peerreduce {

struct Communicator::Impl {
  int rank = 0;
  int size = 1;
  Config config;
  std::shared_ptr<Bootstrap> bootstrap;
  std::shared_ptr<Transport> transport;
  Topology topology;           // agreed by all ranks, link mask applied
  std::string architecture;    // rank 0's device architecture (tuning-table key)
  std::vector<Candidate> candidates;  // every plan this communicator may run; the selector indexes it
  std::vector<std::string> excluded;  // algorithms that cannot run here, with the reason
  std::optional<TuningTable> tuning;
  std::shared_ptr<const AlgorithmSelector> selector;
};

}  // namespace peerreduce
