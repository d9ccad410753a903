// The state behind a MultiMachineCommunicator and the steps its collectives share (internal):
// multi_machine_communicator.cc (creation, allreduce, broadcast) and multi_machine_collectives.cc
// (reduce-scatter, all-gather).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include "api/machine_block_grid.h"
#include "api/machine_strategy.h"
#include "peerreduce/multi_machine.h"

namespace peerreduce {

struct MultiMachineCommunicator::Impl {
  // Set by abort() from any thread: every later call refuses at once with kAborted. Without it a call
  // reached the exchanges between its steps (RankAgreement on the machine's and the network's bootstraps),
  // which no abort ends, and returned kTimeout after twice the bootstrap bound.
  std::atomic<bool> aborted{false};
  int rank = 0;
  int size = 0;
  Config config;
  MachineLayout layout;
  std::shared_ptr<Bootstrap> world;
  MachineLinks links;
  std::unique_ptr<Communicator> machine;
  std::unique_ptr<Communicator> network;
  MachineChoiceTable choices;  // allreduce's, agreed at creation
  // Reduce-scatter's and all-gather's, agreed by the world at each one's first call (collective, as the
  // call is), so a communicator that only allreduces never prices them.
  std::optional<MachineChoiceTable> reduce_scatter_choices;
  std::optional<MachineChoiceTable> all_gather_choices;
  // Where each rank's block lies (machineBlockGrid), or why the layout has no such grid.
  StatusOr<MachineBlockGrid> grid = MachineBlockGrid{};
  // Reduce-scatter's intermediate partials (of the kind the user's buffers are: gpu/workspace_memory.h),
  // kept for the next call; `workspace_device` is the device it lies on, -1 for host memory.
  std::shared_ptr<std::byte> workspace;
  std::size_t workspace_bytes = 0;
  int workspace_device = -1;
};

// kAborted for `operation` on an aborted communicator, naming the rank and what to do; ok otherwise. The
// first check of every call, before its arguments, so nothing is read, written or exchanged.
Status checkNotAborted(const MultiMachineCommunicator::Impl& impl, const char* operation);

// Completes the network step (every rank of the network world synchronizes, even after a failure of its
// own machine step, `prior`), names what the network world's detector saw, and lets every machine of
// the network world learn whether every other one's step worked (one small exchange on its bootstrap).
Status finishNetworkPhase(MultiMachineCommunicator::Impl& impl, Status network_phase, StreamHandle stream,
                          const Status& prior);

// Every local rank learns whether every other one's steps so far worked (one small exchange on the
// machine's bootstrap), so none starts the machine's last step with data that is not there.
Status agreeOnMachineStep(MultiMachineCommunicator::Impl& impl, const Status& mine, const char* what,
                          const char* operation);

}  // namespace peerreduce
