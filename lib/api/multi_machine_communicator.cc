// A communicator that spans machines: the machine and network communicators of one rank, and the
// allreduce that runs across them (peerreduce/multi_machine.h, docs/MULTI_MACHINE.md).
#include <algorithm>
#include <cstring>
#include <set>
#include <string>

#include "api/argument_checks.h"
#include "api/machine_layout.h"
#include "api/machine_strategy.h"
#include "api/multi_machine_impl.h"
#include "bootstrap/host_identity.h"
#include "bootstrap/rank_agreement.h"
#include "peerreduce/multi_machine.h"
#include "topology/topology_file.h"
#include "util/hash.h"

namespace peerreduce {

namespace {

Status checkLinks(const MachineLinks& links, const MachineLayout& layout) {
  const std::string who = "rank " + std::to_string(layout.rank) + " (local rank " + std::to_string(layout.local_rank) +
                          " of machine '" + layout.machine_names[static_cast<std::size_t>(layout.machine)] + "')";
  if (!links.machine_bootstrap || !links.machine_transport || !links.network_bootstrap || !links.network_transport) {
    return invalidArgumentError(who + ": the machine links factory left a bootstrap or transport null");
  }
  return Status::ok();
}

// The network worlds must price and fold alike (a flat allreduce and a split's tail run in every
// network world, and every rank must get the same bits): the same links in each.
std::uint64_t networkFingerprint(const Communicator& network) {
  Fnv1a hash;
  hash.addString(formatTopology(network.topology()));
  return hash.value();
}

StatusOr<std::unique_ptr<Communicator>> createMember(int rank, int size, const std::shared_ptr<Bootstrap>& bootstrap,
                                                     const std::shared_ptr<Transport>& transport, const Config& config,
                                                     const char* which) {
  auto comm = Communicator::create(rank, size, bootstrap, transport, config);
  if (!comm.isOk()) return comm.status().withContext(std::string("creating the ") + which + " communicator");
  return comm;
}

}  // namespace

MultiMachineCommunicator::MultiMachineCommunicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MultiMachineCommunicator::~MultiMachineCommunicator() = default;

StatusOr<std::unique_ptr<MultiMachineCommunicator>> MultiMachineCommunicator::create(
    int rank, int size, std::shared_ptr<Bootstrap> world_bootstrap, const MachineLinksFactory& factory,
    const Config& config, const std::string& host_identity) {
  if (!world_bootstrap) return invalidArgumentError("rank " + std::to_string(rank) + ": world bootstrap is null");
  if (!factory) return invalidArgumentError("rank " + std::to_string(rank) + ": machine links factory is empty");
  if (world_bootstrap->rank() != rank || world_bootstrap->size() != size) {
    return invalidArgumentError("rank " + std::to_string(rank) + " of " + std::to_string(size) +
                                " was given the world bootstrap of rank " + std::to_string(world_bootstrap->rank()) +
                                " of " + std::to_string(world_bootstrap->size()));
  }
  PR_RETURN_IF_ERROR(config.validate());
  auto impl = std::make_unique<Impl>();
  impl->rank = rank;
  impl->size = size;
  impl->config = config;
  impl->world = std::move(world_bootstrap);
  const RankAgreement world(*impl->world, config.bootstrapTimeout());

  std::string identity = host_identity;
  if (identity.empty()) {
    auto found = hostIdentity();
    PR_RETURN_IF_ERROR(world.outcome(found.status(), "learn its host identity"));
    identity = *found;
  }
  PR_ASSIGN_OR_RETURN(impl->layout, gatherMachineLayout(*impl->world, identity, config.bootstrapTimeout()));
  const MachineLayout& layout = impl->layout;

  auto links = factory(layout);
  Status got = links.isOk() ? checkLinks(*links, layout) : links.status();
  PR_RETURN_IF_ERROR(world.outcome(got, "get its links to its machine and to the network"));
  impl->links = std::move(*links);

  // Each rank creates its machine communicator, then its network communicator, then tells the world
  // whether both worked, so a rank whose machine or network failed fails every rank at once.
  auto machine = createMember(layout.local_rank, layout.ranks_per_machine, impl->links.machine_bootstrap,
                              impl->links.machine_transport, config, "machine");
  Status made = machine.status();
  if (machine.isOk()) {
    impl->machine = std::move(*machine);
    auto network = createMember(layout.machine, layout.machines, impl->links.network_bootstrap,
                                impl->links.network_transport, config, "network");
    made = network.status();
    if (network.isOk()) impl->network = std::move(*network);
  }
  PR_RETURN_IF_ERROR(world.outcome(made, "create its machine and network communicators"));
  const Status same = world.sameValue(networkFingerprint(*impl->network), "see the same network links");
  if (!same.isOk()) {
    return unsupportedError(
        "the network worlds of different local ranks see different links between machines (" + same.message() +
        "); every local rank's network world must have the same links so that every rank folds alike");
  }
  impl->grid = machineBlockGrid(layout);
  PR_ASSIGN_OR_RETURN(impl->choices, agreeMachineChoices(Collective::kAllReduce, *impl->machine, *impl->network,
                                                         shapeOf(layout, impl->grid), world));
  return std::unique_ptr<MultiMachineCommunicator>(new MultiMachineCommunicator(std::move(impl)));
}

namespace {

// "machine 'b' (network rank 1)" for each machine the network communicator's detector lost, and the
// links between machines it saw go down, for messages.
std::string describeNetworkFailure(const Communicator& network, const MachineLayout& layout) {
  const FailureReport report = network.failureReport();
  std::string what;
  auto name = [&](int machine) {
    const bool known = machine >= 0 && machine < layout.machines;
    return "machine '" + (known ? layout.machine_names[static_cast<std::size_t>(machine)] : std::string("?")) + "'";
  };
  for (int lost : report.lost_ranks) what += (what.empty() ? "" : ", ") + name(lost) + " lost";
  for (const auto& [a, b] : report.dead_links) {
    what +=
        (what.empty() ? "" : ", ") + std::string("the network link between ") + name(a) + " and " + name(b) + " down";
  }
  return what;
}

}  // namespace

// Completes the network step (every rank of the network world synchronizes, even after a failure, and
// after a failure of its own machine step, `prior`), puts what the network world's detector saw into its
// error, and lets every machine of the network world learn whether every other one's step worked: a
// step can complete on some machines and fail on others (a link down between two of three machines
// leaves the third's reads intact), and every rank must fail together (one small exchange on the
// network world's bootstrap per operation).
Status finishNetworkPhase(MultiMachineCommunicator::Impl& impl, Status network_phase, StreamHandle stream,
                          const Status& prior) {
  const MachineLayout& layout = impl.layout;
  const Status network_sync = impl.network->synchronize(stream);
  if (network_phase.isOk()) network_phase = network_sync;
  // Aborted while the step ran (the synchronize above returned at once): the exchange below waits for the
  // other machines, which no abort ends.
  PR_RETURN_IF_ERROR(checkNotAborted(impl, "an operation"));
  // A rank whose own network end stopped (its machine lost, as its detector sees it) may have nothing
  // to wait for and so no error of its own: it must not pass its data on as if it had arrived.
  if (network_phase.isOk() && impl.links.network_transport->peerHealth(layout.machine) == PeerHealth::kLost) {
    network_phase = peerLostError("this machine's end of the network stopped");
  }
  const std::string where = "between machines (network world of local rank " + std::to_string(layout.local_rank);
  if (!network_phase.isOk()) {
    const std::string seen = describeNetworkFailure(*impl.network, layout);
    network_phase = network_phase.withContext(where + (seen.empty() ? "" : ": " + seen) + ")");
  }
  const Status mine = prior.isOk() ? network_phase : prior;
  const RankAgreement machines(*impl.links.network_bootstrap, impl.config.bootstrapTimeout());
  auto codes = machines.gather(static_cast<std::int32_t>(mine.code()));
  if (!codes.isOk()) return codes.status().withContext(where + ": agreeing on the step's outcome)");
  if (!mine.isOk()) return mine;
  std::string failed;
  ErrorCode first = ErrorCode::kOk;
  for (int m = 0; m < layout.machines; ++m) {
    const auto code = static_cast<ErrorCode>((*codes)[static_cast<std::size_t>(m)]);
    if (code == ErrorCode::kOk) continue;
    if (first == ErrorCode::kOk) first = code;
    failed += (failed.empty() ? "machine '" : ", machine '") + layout.machine_names[static_cast<std::size_t>(m)] +
              "' (" + std::string(errorCodeName(code)) + ")";
  }
  if (failed.empty()) return Status::ok();
  return unavailableError(where + "): the step failed on " + failed + "; see those ranks' errors");
}

// Every local rank learns whether every other one's steps so far worked, so none starts the machine's
// last step with data that is not there (one small exchange on the machine's bootstrap per operation).
Status agreeOnMachineStep(MultiMachineCommunicator::Impl& impl, const Status& mine, const char* what,
                          const char* operation) {
  const MachineLayout& layout = impl.layout;
  PR_RETURN_IF_ERROR(checkNotAborted(impl, operation));  // the exchange below is not ended by an abort
  const RankAgreement machine_ranks(*impl.links.machine_bootstrap, impl.config.bootstrapTimeout());
  const Status agreed = machine_ranks.outcome(mine, what);
  if (agreed.isOk()) return agreed;
  // A rank that failed itself keeps its own message; the others' names the failed one by its local rank.
  return Status(agreed.code(), std::string(operation) + " across machines on rank " + std::to_string(impl.rank) +
                                   " (machine '" + layout.machine_names[static_cast<std::size_t>(layout.machine)] +
                                   "', local rank " + std::to_string(layout.local_rank) +
                                   "): " + (mine.isOk() ? "local " : "") + agreed.message());
}

Status checkNotAborted(const MultiMachineCommunicator::Impl& impl, const char* operation) {
  if (!impl.aborted.load(std::memory_order_acquire)) return Status::ok();
  return abortedError(std::string(operation) + " across machines on rank " + std::to_string(impl.rank) +
                      ": the communicator was aborted; destroy it and create a new one");
}

Status MultiMachineCommunicator::allreduce(const void* send, void* recv, std::size_t count, DataType dtype, ReduceOp op,
                                           StreamHandle stream, MachineStrategy strategy) {
  Impl& impl = *impl_;
  const MachineLayout& layout = impl.layout;
  PR_RETURN_IF_ERROR(checkNotAborted(impl, "allreduce"));
  PR_RETURN_IF_ERROR(checkAllreduceArguments(send, recv, count, dtype, op, impl.rank));
  if (op == ReduceOp::kAvg && !isFloatingPoint(dtype)) {
    return unsupportedError("allreduce across machines on rank " + std::to_string(impl.rank) + ": avg of " +
                            std::string(dataTypeName(dtype)) +
                            " is not supported (the division must see the whole sum once, and each machine's "
                            "and the network's steps divide separately); sum and divide by the world size instead");
  }
  if (strategy != MachineStrategy::kAuto && strategy != MachineStrategy::kHierarchical &&
      strategy != MachineStrategy::kFlat) {
    return invalidArgumentError("allreduce across machines: unknown strategy " +
                                std::to_string(static_cast<int>(strategy)));
  }
  if (count == 0) return Status::ok();
  const std::size_t elem = dataTypeSize(dtype);
  if (strategy == MachineStrategy::kAuto) strategy = impl.choices.choose(count * elem);
  const MachineSplit split = strategy == MachineStrategy::kHierarchical
                                 ? MachineSplit::of(count, layout.ranks_per_machine)
                                 : MachineSplit{0, count};
  auto* out = static_cast<std::byte*>(recv);
  const auto* in = static_cast<const std::byte*>(send);
  const std::size_t bulk_bytes = split.share * static_cast<std::size_t>(layout.ranks_per_machine) * elem;
  std::byte* my_share = out + split.share * static_cast<std::size_t>(layout.local_rank) * elem;

  // Phase 1, inside the machine: the split's reduce-scatter and the unsplit rest's allreduce. Every rank
  // makes every synchronize call even after a failure: on the simulator synchronize is collective.
  Status machine_phase = Status::ok();
  if (split.share > 0) machine_phase = impl.machine->reduceScatter(in, my_share, split.share, dtype, op, stream);
  if (machine_phase.isOk() && split.tail > 0) {
    machine_phase = impl.machine->allreduce(in + bulk_bytes, out + bulk_bytes, split.tail, dtype, op, stream);
  }
  const Status machine_sync = impl.machine->synchronize(stream);
  if (machine_phase.isOk()) machine_phase = machine_sync;

  // Phase 2, between machines: this local rank's share, and the rest, in its network world.
  Status network_phase = Status::ok();
  if (machine_phase.isOk()) {
    if (split.share > 0) network_phase = impl.network->allreduce(my_share, my_share, split.share, dtype, op, stream);
    if (network_phase.isOk() && split.tail > 0) {
      network_phase = impl.network->allreduce(out + bulk_bytes, out + bulk_bytes, split.tail, dtype, op, stream);
    }
  }
  network_phase = finishNetworkPhase(impl, network_phase, stream, machine_phase);
  const Status before_gather = machine_phase.isOk() ? network_phase : machine_phase;
  PR_RETURN_IF_ERROR(agreeOnMachineStep(impl, before_gather, "reduce its share across machines", "allreduce"));

  // Phase 3, inside the machine: every share to every local rank (in place: the share is already at
  // its place in recv). Enqueued; synchronize() completes it.
  if (split.share > 0) return impl.machine->allGather(my_share, out, split.share, dtype, stream);
  return Status::ok();
}

Status MultiMachineCommunicator::broadcast(const void* send, void* recv, std::size_t count, DataType dtype, int root,
                                           StreamHandle stream) {
  Impl& impl = *impl_;
  const MachineLayout& layout = impl.layout;
  PR_RETURN_IF_ERROR(checkNotAborted(impl, "broadcast"));
  PR_RETURN_IF_ERROR(checkBroadcastArguments(send, recv, count, dtype, root, impl.rank, impl.size));
  if (count == 0) return Status::ok();
  const int root_machine = layout.machine_of_rank[static_cast<std::size_t>(root)];
  const int root_local = layout.local_rank_of_rank[static_cast<std::size_t>(root)];
  // Phase 1, between machines: the root's network world carries the data to the root's local rank on
  // every machine (the other network worlds take no part).
  Status network_phase = Status::ok();
  if (layout.local_rank == root_local) {
    network_phase =
        impl.network->broadcast(impl.rank == root ? send : nullptr, recv, count, dtype, root_machine, stream);
    network_phase = finishNetworkPhase(impl, network_phase, stream, Status::ok());
  }
  PR_RETURN_IF_ERROR(agreeOnMachineStep(impl, network_phase, "receive the broadcast across machines", "broadcast"));
  // Phase 2, inside each machine: from that rank to the others (in place on it). Enqueued.
  return impl.machine->broadcast(recv, recv, count, dtype, root_local, stream);
}

Status MultiMachineCommunicator::synchronize(StreamHandle stream) {
  PR_RETURN_IF_ERROR(checkNotAborted(*impl_, "synchronize"));
  return impl_->machine->synchronize(stream);
}

void MultiMachineCommunicator::abort() {
  // The flag first: a call that starts now refuses before it waits on anything; then the two
  // communicators end the waits of a call in flight.
  impl_->aborted.store(true, std::memory_order_release);
  impl_->machine->abort();
  impl_->network->abort();
}

int MultiMachineCommunicator::rank() const { return impl_->rank; }
int MultiMachineCommunicator::size() const { return impl_->size; }
const MachineLayout& MultiMachineCommunicator::layout() const { return impl_->layout; }
FailureReport MultiMachineCommunicator::failureReport() const {
  const MachineLayout& layout = impl_->layout;
  FailureReport world;
  world.rank = impl_->rank;
  std::set<int> lost;
  const FailureReport machine = impl_->machine->failureReport();
  for (int local : machine.lost_ranks) {
    if (local >= 0 && local < layout.ranks_per_machine) lost.insert(layout.worldRank(layout.machine, local));
  }
  const FailureReport network = impl_->network->failureReport();
  for (int m : network.lost_ranks) {
    if (m < 0 || m >= layout.machines) continue;
    for (int r : layout.ranks_of_machine[static_cast<std::size_t>(m)]) lost.insert(r);
  }
  world.lost_ranks.assign(lost.begin(), lost.end());
  auto inWorld = [&](int machine_index, int local) { return layout.worldRank(machine_index, local); };
  for (const auto& [a, b] : machine.dead_links) {
    if (a < 0 || b < 0 || a >= layout.ranks_per_machine || b >= layout.ranks_per_machine) continue;
    world.dead_links.emplace_back(inWorld(layout.machine, a), inWorld(layout.machine, b));
  }
  for (const auto& [a, b] : network.dead_links) {
    if (a < 0 || b < 0 || a >= layout.machines || b >= layout.machines) continue;
    world.dead_links.emplace_back(inWorld(a, layout.local_rank), inWorld(b, layout.local_rank));
  }
  return world;
}

Communicator& MultiMachineCommunicator::machineCommunicator() { return *impl_->machine; }
Communicator& MultiMachineCommunicator::networkCommunicator() { return *impl_->network; }

StatusOr<MachineSelection> MultiMachineCommunicator::explainSelection(std::size_t count, DataType dtype) const {
  PR_ASSIGN_OR_RETURN(MachineSelection s, predictMachineStrategies(*impl_->machine, *impl_->network,
                                                                   impl_->layout.ranks_per_machine, count, dtype));
  s.chosen = impl_->choices.choose(count * dataTypeSize(dtype));
  return s;
}

}  // namespace peerreduce
