#include <fstream>

#include "engine.h"
#include "peerreduce/simulator.h"
#include "peerreduce/types.h"
#include "sim_transport.h"

namespace peerreduce::sim {

StatusOr<std::shared_ptr<SimWorld>> SimWorld::create(int world_size, SimOptions options) {
  if (world_size < 1 || world_size > kMaxWorldSize) {
    return invalidArgumentError("simulated world of " + std::to_string(world_size) + " ranks; supported sizes are 1.." +
                                std::to_string(kMaxWorldSize));
  }
  if (options.topology.worldSize() != 0 && options.topology.worldSize() != world_size) {
    return invalidArgumentError("topology describes " + std::to_string(options.topology.worldSize()) +
                                " ranks for a simulated world of " + std::to_string(world_size));
  }
  if (!(options.wait_timeout_us > 0.0)) {
    return invalidArgumentError("simulator wait timeout must be positive (got " +
                                std::to_string(options.wait_timeout_us) + " us)");
  }
  std::shared_ptr<SimWorld> world(new SimWorld());
  world->engine_ = std::make_shared<SimEngine>(world_size, std::move(options));
  PR_ASSIGN_OR_RETURN(world->bootstraps_, createInProcessGroup(world_size));
  auto buffers = std::make_shared<SimBufferRegistry>(world_size, world->engine_->worldId());
  for (int r = 0; r < world_size; ++r) {
    world->transports_.push_back(std::make_shared<SimTransport>(world->engine_, buffers, r));
  }
  return world;
}

SimWorld::~SimWorld() = default;

int SimWorld::worldSize() const { return engine_->worldSize(); }
const SimOptions& SimWorld::options() const { return engine_->options(); }
std::shared_ptr<Transport> SimWorld::transport(int rank) const {
  return transports_.at(static_cast<std::size_t>(rank));
}
std::shared_ptr<Bootstrap> SimWorld::bootstrap(int rank) const {
  return bootstraps_.at(static_cast<std::size_t>(rank));
}
Status SimWorld::runUntilIdle() { return engine_->runUntilIdle(); }
SimStats SimWorld::stats() const { return engine_->stats(); }
std::vector<std::string> SimWorld::raceReports() const { return engine_->raceReports(); }
std::uint64_t SimWorld::traceFingerprint() const { return engine_->traceFingerprint(); }
std::string SimWorld::chromeTraceJson() const { return engine_->chromeTraceJson(); }
void SimWorld::resetStats() { engine_->resetStats(); }
std::byte* SimWorld::hostRegion(int rank) const { return engine_->regionOf(rank); }
SimFaults& SimWorld::faults() const { return *engine_; }

Status SimWorld::writeChromeTrace(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return unavailableError("cannot open '" + path + "' to write the trace");
  out << chromeTraceJson();
  out.close();
  if (!out) return unavailableError("writing the trace to '" + path + "' failed (disk full?)");
  return Status::ok();
}

}  // namespace peerreduce::sim
