// The simulator's C handle (internal): what a prSimWorld_t points at. Shared by sim/c_api_sim.cc and the
// tests that reach through a handle to its world.
#pragma once

#include <memory>

#include "peerreduce/peerreduce_sim.h"
#include "peerreduce/simulator.h"

struct prSimWorld {
  std::shared_ptr<peerreduce::sim::SimWorld> world;
};
