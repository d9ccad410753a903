// Communicators that span machines: how ranks are grouped by machine, and the seam through which a
// rank gets the two worlds it works in.
//
// A world of N ranks on M machines (K ranks each) is run as two kinds of ordinary worlds:
//   - the machine world: the K ranks of one machine (rank = local rank), over peer memory as any
//     single-machine communicator (a GPU transport, or the simulator);
//   - the network world: local rank i of every machine (rank = machine index, world size M), one per
//     local rank index, over a Transport whose links are the network (LinkClass::kNetwork): the MPI
//     transport between machines, or the simulator's M-rank world with network links.
// Each is an ordinary Communicator over an ordinary Transport: its plans are built, verified and
// chosen like any other, so the step between machines is a plan like any other.
//
// Grouping: at creation every rank contributes its host identity (lib/bootstrap/host_identity.h: the
// host name, or PEERREDUCE_NODE so that one machine can act as several) through the world's bootstrap;
// machines are numbered by the order of their lowest rank, local ranks by world rank within a machine.
//
// The seam: a MachineLinksFactory, called once on each rank with the layout every rank agreed on,
// returns that rank's two bootstraps and two transports. The simulator's factory
// (peerreduce/multi_machine_sim.h) hands out simulated worlds; the MPI one splits MPI_COMM_WORLD by
// machine and by local rank.
//
// Thread safety: MachineLayout is a value; a factory is called from each rank's own thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "peerreduce/communicator.h"
#include "peerreduce/config.h"
#include "peerreduce/recovery.h"
#include "peerreduce/status.h"
#include "peerreduce/transport.h"
#include "peerreduce/types.h"

namespace peerreduce {

// How the ranks of a world sit on machines: the same value on every rank.
struct MachineLayout {
  int world_size = 0;
  int machines = 0;                                // M
  int ranks_per_machine = 0;                       // K, equal on every machine (creation refuses unequal machines)
  std::vector<std::string> machine_names;          // by machine index: the host identity
  std::vector<int> machine_of_rank;                // by world rank
  std::vector<int> local_rank_of_rank;             // by world rank: position among its machine's ranks
  std::vector<std::vector<int>> ranks_of_machine;  // by machine index: world ranks, ascending
  // This rank's place.
  int rank = 0;
  int machine = 0;
  int local_rank = 0;

  // The world rank of local rank `local` on machine `machine`.
  int worldRank(int machine_index, int local) const {
    return ranks_of_machine[static_cast<std::size_t>(machine_index)][static_cast<std::size_t>(local)];
  }
};

// What one rank needs to take part in a communicator that spans machines. Every member is required.
struct MachineLinks {
  // This rank's machine: world of ranks_per_machine ranks, this rank is its local rank.
  std::shared_ptr<Bootstrap> machine_bootstrap;
  std::shared_ptr<Transport> machine_transport;
  // Local rank `local_rank` of every machine: world of `machines` ranks, this rank is its machine index.
  // The transport's topology names the links between machines (LinkClass::kNetwork).
  std::shared_ptr<Bootstrap> network_bootstrap;
  std::shared_ptr<Transport> network_transport;
};

// Hands a rank its links, given the agreed layout (layout.rank is the caller). Called once per rank
// during creation, on the rank's own thread, at the same point on every rank; an error fails creation
// on every rank (each learns which rank could not get its links).
using MachineLinksFactory = std::function<StatusOr<MachineLinks>(const MachineLayout& layout)>;

// How an allreduce crosses machines (docs/MULTI_MACHINE.md; reduce-scatter and all-gather: below):
//   kHierarchical: reduce-scatter inside each machine, an allreduce of each local rank's share between
//                  machines (local rank i's network world carries share i), an all-gather inside each
//                  machine: every NIC carries 1/K of the data;
//   kFlat:         the whole vector crosses the network unsplit: an allreduce inside each machine, then
//                  every network world allreduces the whole vector (the same plan on the same bits, so
//                  every rank gets the same result): one phase fewer, K times the network bytes.
// kAuto: the cost model's choice per size, the same on every rank.
enum class MachineStrategy { kAuto, kHierarchical, kFlat };
const char* machineStrategyName(MachineStrategy strategy);

// What an allreduce of a given size runs and what the model predicts for each strategy.
struct MachineSelection {
  MachineStrategy chosen = MachineStrategy::kHierarchical;  // the agreed table's (a call may force another)
  double hierarchical_us = 0.0;                             // predicted: max over ranks of each phase, phases added
  double flat_us = 0.0;
  // The plans each phase runs (the machine and network communicators' own selections).
  std::string machine_reduce_scatter;
  std::string network_allreduce;
  std::string machine_all_gather;
  std::string machine_allreduce;       // flat's first phase
  std::string network_flat_allreduce;  // flat's second phase
  // Reduce-scatter and all-gather: each strategy's steps, in order, with their plans.
  std::string hierarchical_plans;
  std::string flat_plans;
};

// One rank's handle on a world that spans machines. Created collectively by every rank of the world
// with its world bootstrap (used for grouping and for agreement), the factory of its links and the
// same configuration; `host_identity` overrides hostIdentity() (empty: PEERREDUCE_NODE or the host
// name), which is how one process plays several machines.
//
// Contract as Communicator's, with these limits (each refused with a typed error naming it):
// every machine has the same number of ranks (kUnsupported naming the machines and their counts);
// avg of integer types is kUnsupported (the division must see the whole sum once).
// allreduce() runs its first phases before it returns (the step between machines needs the machine's
// result) and enqueues the last one; synchronize() completes it.
class MultiMachineCommunicator {
 public:
  static StatusOr<std::unique_ptr<MultiMachineCommunicator>> create(int rank, int size,
                                                                    std::shared_ptr<Bootstrap> world_bootstrap,
                                                                    const MachineLinksFactory& factory,
                                                                    const Config& config = Config{},
                                                                    const std::string& host_identity = {});
  ~MultiMachineCommunicator();
  MultiMachineCommunicator(const MultiMachineCommunicator&) = delete;
  MultiMachineCommunicator& operator=(const MultiMachineCommunicator&) = delete;

  Status allreduce(const void* send, void* recv, std::size_t count, DataType dtype, ReduceOp op,
                   StreamHandle stream = nullptr, MachineStrategy strategy = MachineStrategy::kAuto);
  // The root's `send` (count elements; read on the root only) lands in every rank's `recv`: the root's
  // network world (local rank of the root on every machine) broadcasts between machines, then every
  // machine broadcasts from that local rank. Returns after the first step, as allreduce does.
  Status broadcast(const void* send, void* recv, std::size_t count, DataType dtype, int root,
                   StreamHandle stream = nullptr);
  // NCCL's buffers (Communicator::reduceScatter / allGather, world ranks): block b of every rank's `send`
  // (size() x recvcount elements) reduced lands in world rank b's `recv`; in place when recv == send +
  // rank x recvcount. kHierarchical reduces each machine's blocks inside every machine (one
  // reduce-scatter per machine's blocks, into a workspace of machines x recvcount elements) and then
  // each local rank's blocks between machines (network world i); kFlat reduces between machines first
  // (every row of K blocks crosses the network: K times the bytes) into a workspace of K x recvcount,
  // then inside the machine. The fold order is fixed by the strategy the agreed table picks, so every
  // rank and every rerun gets the same bits. Complete when it returns (the workspace is reused).
  // Ranks must be placed so that each machine's and each local rank's blocks are evenly spaced (machine
  // by machine, or round robin over machines): otherwise kUnsupported naming the machine.
  Status reduceScatter(const void* send, void* recv, std::size_t recvcount, DataType dtype, ReduceOp op,
                       StreamHandle stream = nullptr, MachineStrategy strategy = MachineStrategy::kAuto);
  // Rank b's `send` (sendcount elements) lands in block b of every rank's `recv` (size() x sendcount);
  // in place when send == recv + rank x sendcount. kHierarchical gathers each local rank's blocks between
  // machines straight into `recv`, then every machine's blocks inside the machine (one all-gather per
  // machine); kFlat gathers inside the machine first, then whole machines' rows between machines. Bits
  // are copied. Hierarchical returns after the step between machines, as allreduce does, and
  // synchronize() completes it; flat is complete when it returns. Every rank passes the same strategy.
  Status allGather(const void* send, void* recv, std::size_t sendcount, DataType dtype, StreamHandle stream = nullptr,
                   MachineStrategy strategy = MachineStrategy::kAuto);
  Status synchronize(StreamHandle stream = nullptr);
  void abort();

  int rank() const;
  int size() const;
  const MachineLayout& layout() const;
  StatusOr<MachineSelection> explainSelection(std::size_t count, DataType dtype) const;
  // Any collective that crosses machines (allreduce, reduce-scatter, all-gather; count per rank). Not
  // const: a collective's first selection builds its plans and agrees on its table, so every rank of
  // the world calls it at the same point, as it would the collective.
  StatusOr<MachineSelection> explainSelection(Collective collective, std::size_t count, DataType dtype);

  // Recovery across machines (peerreduce/recovery.h): what this rank's machine and network
  // communicators' detectors saw, in world ranks. A machine its network world lost is every rank of
  // that machine; a network link down between machines a and b is the link between local rank i of a
  // and of b (i: this rank's local rank). Feed it to agreeOnFailures over the world's bootstrap with
  // agreementTopology(), then planMachineShrink.
  FailureReport failureReport() const;

  // The two communicators this rank works in (for inspection and recovery).
  Communicator& machineCommunicator();
  Communicator& networkCommunicator();

  struct Impl;

 private:
  explicit MultiMachineCommunicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The links the failure agreement floods over in a world that spans machines: every rank to every rank
// of the world (the world's bootstrap carries the agreement, not the data path).
Topology agreementTopology(const MachineLayout& layout);

// Which machines go on after a failure decision: a machine stays only with all of its ranks (every
// machine needs the same number of ranks) and only while every network link between kept machines is
// up (of two machines joined by a dead link, the one of higher index leaves). survivors: the world
// ranks of the kept machines, ascending, which create the new world's communicator (with a new world
// bootstrap and links factory). kUnavailable naming the machines when none is left.
struct MachineShrink {
  std::vector<int> machines;         // kept machine indices, ascending
  std::vector<int> survivors;        // their world ranks, ascending
  std::vector<std::string> dropped;  // why each other machine left, naming it
};
StatusOr<MachineShrink> planMachineShrink(const MachineLayout& layout, const FailureDecision& decision);

}  // namespace peerreduce
