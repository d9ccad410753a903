// FaultyWorld: a simulated world whose transports sit behind the fault injector, with one communicator
// per rank, and the recovery sequence (abort, report, agree over the bootstrap, shrink) the way an
// application runs it: every rank on its own thread for the collective steps.
#pragma once

#include <memory>
#include <vector>

#include "faults/faulty_transport.h"
#include "peerreduce/communicator.h"
#include "peerreduce/recovery.h"
#include "peerreduce/simulator.h"
#include "sim_cluster.h"
#include "sim_fault_hooks.h"

namespace peerreduce::testing {

class FaultyWorld {
 public:
  // `topology` fixes the world size; waits time out after `wait_timeout_us` of virtual time;
  // `creation_faults` are injected before the communicators are created.
  static StatusOr<std::unique_ptr<FaultyWorld>> create(const Topology& topology, Config config = smallConfig(),
                                                       double wait_timeout_us = 5000.0,
                                                       const std::vector<faults::Fault>& creation_faults = {});
  static Config smallConfig();

  int size() const { return cluster_->size(); }
  Communicator& comm(int rank) { return cluster_->comm(rank); }
  faults::FaultController& faults() { return *controller_; }
  sim::SimWorld& world() { return *world_; }
  const Topology& topology() const { return topology_; }

  // Every rank allreduces its `inputs[r]` (int32 sum) in place; the engine runs; each rank's status
  // (the enqueue error, else the operation's) and result.
  struct Outcome {
    std::vector<Status> status;
    std::vector<std::vector<std::int32_t>> result;
  };
  Outcome allreduce(const std::vector<std::vector<std::int32_t>>& inputs,
                    const std::vector<faults::Fault>& mid_operation = {});

  // Every rank aborts, reports, and agrees over the bootstrap (one thread per rank): each rank's decision.
  std::vector<StatusOr<FailureDecision>> abortAndAgree();
  // The survivors of `decisions` (one per rank) shrink into a new FaultyWorld over the shrunk topology.
  // The ranks declared failed must get kPeerLost (else this fails with kInternal).
  StatusOr<std::unique_ptr<FaultyWorld>> shrink(const std::vector<FailureDecision>& decisions);

 private:
  FaultyWorld() = default;
  // A world over `topology` with the injector in front of every transport; no communicators yet.
  static StatusOr<std::unique_ptr<FaultyWorld>> prepare(const Topology& topology, const Config& config,
                                                        double wait_timeout_us);
  Topology topology_;
  Config config_;
  double wait_timeout_us_ = 0.0;
  std::shared_ptr<sim::SimFaultHooks> hooks_;
  std::shared_ptr<faults::FaultController> controller_;
  std::shared_ptr<sim::SimWorld> world_;
  std::vector<std::shared_ptr<Transport>> transports_;
  std::unique_ptr<sim::SimCluster> cluster_;
};

}  // namespace peerreduce::testing
