// A world of machines for tests under mpirun: this process is machine `machine` of `machines`
// (MPI_COMM_WORLD) and holds `local_ranks` simulated GPUs, each a thread with its own inter-machine
// MpiTransport (one world of `machines` ranks per local rank index, as the multi-machine communicator
// uses them).
//
// Verdicts are collective (everyMachine): every process of the test decides the same, so RapidCheck
// draws and shrinks the same cases on every machine.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpi/mpi_transport.h"

namespace peerreduce::testing {

struct MachineWorld {
  int machine = 0;
  int machines = 1;
  std::vector<std::shared_ptr<mpi::MpiTransport>> transports;  // one per local rank
};

// Local ranks per machine in these tests: several, so transports run on several threads at once.
inline constexpr int kLocalRanks = 2;
// Symmetric region of every transport: enough for every case the suites draw.
inline constexpr std::size_t kTestRegionBytes = std::size_t{4} << 20;

// Creates and connects the transports (collective over MPI_COMM_WORLD).
StatusOr<MachineWorld> makeMachineWorld(int local_ranks = kLocalRanks, mpi::MpiTransportOptions options = {},
                                        std::size_t region_bytes = kTestRegionBytes);

// A float allreduce (sum) of `plan` from `in` into `out` (of the same size), each wait bounded by `timeout`.
ExecutionRequest floatAllreduceRequest(const std::shared_ptr<const Plan>& plan, const std::vector<float>& in,
                                       std::vector<float>& out, std::chrono::milliseconds timeout);

// Runs body(local_rank) on a thread per local rank and returns each one's result.
std::vector<Status> onLocalRanks(int local_ranks, const std::function<Status(int)>& body);

// Whether `ok` holds on every machine (a collective call of every process).
bool everyMachine(bool ok);
// Every machine's `mine` (all the same length), in machine order (a collective call).
std::vector<std::vector<std::uint8_t>> gatherFromMachines(const std::vector<std::uint8_t>& mine);
// This process's machine index and the number of machines.
int thisMachine();
int machineCount();

}  // namespace peerreduce::testing
