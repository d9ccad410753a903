// SimFaultHooks: the fault injector's virtual-time hooks (faults::FaultHooks) onto a simulated world.
// Bound to one world at a time (bind), so a fault controller can outlive the worlds a scenario
// re-creates; unbound, the hooks do nothing.
#pragma once

#include <memory>

#include "faults/faulty_transport.h"
#include "peerreduce/simulator.h"

namespace peerreduce::sim {

class SimFaultHooks final : public faults::FaultHooks {
 public:
  void bind(std::shared_ptr<SimWorld> world) { world_ = std::move(world); }
  void setLinkDown(int from, int to, bool down) override {
    if (world_) world_->faults().setLinkDown(from, to, down);
  }
  void setSignalDelay(int from, int to, double delay_us) override {
    if (world_) world_->faults().setSignalDelay(from, to, delay_us);
  }
  void stallRank(int rank, double stall_us) override {
    if (world_) world_->faults().stallRank(rank, stall_us);
  }
  void haltRank(int rank, std::uint64_t actions) override {
    if (world_) world_->faults().haltRank(rank, actions);
  }
  void stallHostCopy(int rank, double stall_us) override {
    if (world_) world_->faults().stallHostCopy(rank, stall_us);
  }

 private:
  std::shared_ptr<SimWorld> world_;
};

}  // namespace peerreduce::sim
