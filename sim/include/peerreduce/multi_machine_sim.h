// The simulator's multi-machine world: M simulated machines of K ranks each, with a simulated network
// between them, behind the seam of peerreduce/multi_machine.h (no MPI, no GPU).
//
// It holds M machine worlds (SimWorld of K ranks, the machine's own links: NVLink by default) and K
// network worlds (SimWorld of M ranks, one per local rank index, every pair linked by a network link:
// LinkClass::kNetwork with the NIC's latency and bandwidth), and a world bootstrap of the M x K ranks
// (in-process; at most kMaxWorldSize ranks). Rank r is on machine r / K, or r % M when `interleaved`
// (so machine and world rank orders differ); its host identity is "machine-<m>".
//
// Time: each simulated world keeps its own virtual clock. A multi-machine allreduce runs its phases one
// after another (the host waits for each), so its simulated time is the slowest machine world's time
// plus the slowest network world's (virtualTimeUs).
//
// Example (one thread per rank):
//   auto world = peerreduce::sim::MultiMachineSimWorld::create({.machines = 2, .ranks_per_machine = 4}).value();
//   auto comm = peerreduce::MultiMachineCommunicator::create(r, 8, world->worldBootstrap(r),
//                                                            world->linksFactory(), {},
//                                                            world->hostIdentity(r)).value();
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "peerreduce/multi_machine.h"
#include "peerreduce/simulator.h"
#include "peerreduce/topology.h"

namespace peerreduce::sim {

struct MultiMachineSimOptions {
  int machines = 2;
  int ranks_per_machine = 2;
  // Each machine's links (world size 0: a full mesh of NVLink among its K ranks).
  Topology machine_topology{};
  // Every link between machines (topology/machines.h networkLink(): 400 Gb/s, 5 us by default).
  LinkInfo network{LinkClass::kNetwork, 5.0, 50.0};
  bool interleaved = false;
  std::uint64_t seed = 1;
  double wait_timeout_us = 10e6;
  bool race_checking = true;
};

class MultiMachineSimWorld {
 public:
  // kInvalidArgument naming the field: machines or ranks per machine outside 1..kMaxWorldSize, a world
  // of more than kMaxWorldSize ranks, a machine topology of another size, a network link not of class
  // kNetwork or with a non-positive bandwidth.
  static StatusOr<std::shared_ptr<MultiMachineSimWorld>> create(const MultiMachineSimOptions& options);

  int worldSize() const;
  int machines() const { return options_.machines; }
  int ranksPerMachine() const { return options_.ranks_per_machine; }
  const MultiMachineSimOptions& options() const { return options_; }
  int machineOf(int rank) const;
  std::string hostIdentity(int rank) const;
  std::shared_ptr<Bootstrap> worldBootstrap(int rank) const;
  // Hands each rank its machine world's and its network world's bootstrap and transport.
  MachineLinksFactory linksFactory() const;

  SimWorld& machineWorld(int machine) const;
  SimWorld& networkWorld(int local_rank) const;
  // The slowest machine world's virtual time plus the slowest network world's.
  double virtualTimeUs() const;
  // Every happens-before violation of every world, each prefixed by its world.
  std::vector<std::string> raceReports() const;
  // The combined fingerprint of every world's trace.
  std::uint64_t traceFingerprint() const;

 private:
  MultiMachineSimWorld() = default;
  MultiMachineSimOptions options_;
  std::vector<std::shared_ptr<SimWorld>> machine_worlds_;
  std::vector<std::shared_ptr<SimWorld>> network_worlds_;
  std::vector<std::shared_ptr<Bootstrap>> world_bootstraps_;
};

}  // namespace peerreduce::sim
