// peerreduce-bench --machines: the MPI world split into `machines` machines of equal rank counts on the
// GPUs of one host (ranks in order: machine k holds ranks k x per .. (k + 1) x per - 1, each naming its
// machine as PEERREDUCE_NODE would), a GPU transport inside each machine and MPI between them, as
// tests/hardware/multi_machine_hw_test.cc uses it too. Collective: every rank calls it.
#pragma once

#include <mpi.h>

#include <memory>

#include "peerreduce/config.h"
#include "peerreduce/multi_machine.h"

namespace peerreduce::bench {

StatusOr<std::unique_ptr<MultiMachineCommunicator>> createMachines(MPI_Comm world, int rank, int size, int machines,
                                                                   int device, const Config& config);

}  // namespace peerreduce::bench
