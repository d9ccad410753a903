// The state behind a Communicator (internal).
#pragma once

#include <array>
#include <memory>

#include "peerreduce/communicator.h"
#include "select/selector.h"

namespace peerreduce {

struct Communicator::Impl {
  int rank = 0;
  int size = 1;
  Config config;
  std::shared_ptr<Bootstrap> bootstrap;
  std::shared_ptr<Transport> transport;
  Topology topology;
  // plans[algorithm][in_place]; null where the algorithm cannot run on this topology.
  std::array<std::array<std::shared_ptr<const Plan>, 2>, kAlgorithmCount> plans{};
  std::shared_ptr<const AlgorithmSelector> selector;
};

}  // namespace peerreduce
