// Reduce-scatter and all-gather across machines (peerreduce/multi_machine.h, docs/MULTI_MACHINE.md).
//
// The user's buffer of every block is a grid: machine m's ranks' blocks form row m, local rank l's blocks
// on every machine form column l (api/machine_block_grid.h), and every step below is one ordinary
// collective over one row or one column, strided (api/strided_collectives.h):
//   reduce-scatter, hierarchical: each row reduced inside the machine (M machine reduce-scatters; local
//     rank l gets its column's machine partials into the workspace), then each column between machines
//     (network world l's reduce-scatter of the workspace into recv);
//   reduce-scatter, flat: each row's K blocks reduced between machines first (network world l reduces
//     local rank l's inputs: machine m gets row m summed over machines into the workspace), then inside
//     the machine;
//   all-gather, hierarchical: column l between machines, straight into recv, then each row inside the
//     machine (M in-place machine all-gathers);
//   all-gather, flat: the own row inside the machine, then whole rows between machines.
// The phases follow one another on the host, each agreed as allreduce's are (finishNetworkPhase,
// agreeOnMachineStep), so a failure anywhere ends every rank's operation with a typed error.
#include <string>

#include "api/argument_checks.h"
#include "api/multi_machine_impl.h"
#include "api/strided_collectives.h"
#include "bootstrap/rank_agreement.h"
#include "gpu/workspace_memory.h"

namespace peerreduce {
namespace {

std::byte* at(void* base, std::size_t elements, std::size_t elem) {
  return static_cast<std::byte*>(base) + elements * elem;
}
const std::byte* at(const void* base, std::size_t elements, std::size_t elem) {
  return static_cast<const std::byte*>(base) + elements * elem;
}

Status checkStrategy(MachineStrategy strategy, const char* call) {
  if (strategy == MachineStrategy::kAuto || strategy == MachineStrategy::kHierarchical ||
      strategy == MachineStrategy::kFlat) {
    return Status::ok();
  }
  return invalidArgumentError(std::string(call) + " across machines: unknown strategy " +
                              std::to_string(static_cast<int>(strategy)));
}

// The agreed table of `collective`, agreed by the world at its first use (every rank reaches it at the
// same call).
StatusOr<const MachineChoiceTable*> choicesOf(MultiMachineCommunicator::Impl& impl, Collective collective) {
  std::optional<MachineChoiceTable>& table =
      collective == Collective::kReduceScatter ? impl.reduce_scatter_choices : impl.all_gather_choices;
  if (!table) {
    const RankAgreement world(*impl.world, impl.config.bootstrapTimeout());
    PR_ASSIGN_OR_RETURN(MachineChoiceTable agreed, agreeMachineChoices(collective, *impl.machine, *impl.network,
                                                                       shapeOf(impl.layout, impl.grid), world));
    table = agreed;
  }
  return &*table;
}

// The workspace of at least `bytes`, of the kind `user_buffer` is, kept for the next call.
StatusOr<std::byte*> workspaceFor(MultiMachineCommunicator::Impl& impl, const void* user_buffer, std::size_t bytes) {
  const int device = userBufferDevice(user_buffer);
  if (impl.workspace && impl.workspace_bytes >= bytes && impl.workspace_device == device) {
    return impl.workspace.get();
  }
  impl.workspace.reset();  // the old one goes first: both need not fit at once
  impl.workspace_bytes = 0;
  auto made = allocateLikeUserBuffer(user_buffer, bytes);
  if (!made.isOk())
    return made.status().withContext("reduceScatter across machines on rank " + std::to_string(impl.rank));
  impl.workspace = std::move(*made);
  impl.workspace_bytes = bytes;
  impl.workspace_device = device;
  return impl.workspace.get();
}

// What every rank of a collective across machines knows before it starts: the grid (or why there is
// none) and the strategy.
StatusOr<MachineStrategy> strategyFor(MultiMachineCommunicator::Impl& impl, Collective collective,
                                      MachineStrategy strategy, std::size_t bytes, const char* call) {
  if (!impl.grid.isOk()) {
    return impl.grid.status().withContext(std::string(call) + " across machines on rank " + std::to_string(impl.rank));
  }
  if (strategy != MachineStrategy::kAuto) return strategy;
  PR_ASSIGN_OR_RETURN(const MachineChoiceTable* table, choicesOf(impl, collective));
  return table->choose(bytes);
}

}  // namespace

Status MultiMachineCommunicator::reduceScatter(const void* send, void* recv, std::size_t recvcount, DataType dtype,
                                               ReduceOp op, StreamHandle stream, MachineStrategy strategy) {
  Impl& impl = *impl_;
  const MachineLayout& layout = impl.layout;
  PR_RETURN_IF_ERROR(checkNotAborted(impl, "reduceScatter"));
  PR_RETURN_IF_ERROR(checkReduceScatterArguments(send, recv, recvcount, dtype, op, impl.rank, impl.size));
  PR_RETURN_IF_ERROR(checkStrategy(strategy, "reduceScatter"));
  if (op == ReduceOp::kAvg && !isFloatingPoint(dtype)) {
    return unsupportedError("reduceScatter across machines on rank " + std::to_string(impl.rank) + ": avg of " +
                            std::string(dataTypeName(dtype)) +
                            " is not supported (the machine's and the network's steps would each divide and "
                            "truncate); sum and divide by the world size instead");
  }
  if (recvcount == 0) return Status::ok();
  const std::size_t elem = dataTypeSize(dtype);
  const std::size_t count = recvcount;
  PR_ASSIGN_OR_RETURN(strategy, strategyFor(impl, Collective::kReduceScatter, strategy, count * elem, "reduceScatter"));
  const MachineBlockGrid& grid = *impl.grid;
  const auto machines = static_cast<std::size_t>(layout.machines);
  const auto k = static_cast<std::size_t>(layout.ranks_per_machine);
  const std::size_t rows = strategy == MachineStrategy::kHierarchical ? machines : k;
  PR_ASSIGN_OR_RETURN(std::byte * workspace, workspaceFor(impl, recv, rows * count * elem));

  if (strategy == MachineStrategy::kHierarchical) {
    // Inside the machine: row m' of every local rank's input, reduced, leaves local rank l with block
    // (m', l)'s machine partial at workspace block m'. Every rank synchronizes even after a failure.
    Status machine_phase = Status::ok();
    for (std::size_t m = 0; m < machines && machine_phase.isOk(); ++m) {
      machine_phase =
          reduceScatterStrided(*impl.machine, at(send, grid.row_start[m] * count, elem), workspace + m * count * elem,
                               count, grid.row_step[m] * count, dtype, op, stream);
    }
    const Status machine_sync = impl.machine->synchronize(stream);
    if (machine_phase.isOk()) machine_phase = machine_sync;
    // Between machines: the workspace's M blocks, one per machine, reduced into recv.
    Status network_phase = Status::ok();
    if (machine_phase.isOk()) network_phase = impl.network->reduceScatter(workspace, recv, count, dtype, op, stream);
    network_phase = finishNetworkPhase(impl, network_phase, stream, machine_phase);
    return agreeOnMachineStep(impl, machine_phase.isOk() ? network_phase : machine_phase,
                              "reduce its blocks across machines", "reduceScatter");
  }

  // Flat. Between machines: local rank l's rows, reduced, leave machine m with row m summed over machines
  // (from local rank l's inputs) in the workspace; one collective when rows are contiguous.
  Status network_phase = Status::ok();
  if (grid.rows_contiguous) {
    network_phase = impl.network->reduceScatter(send, workspace, k * count, dtype, op, stream);
  } else {
    for (std::size_t j = 0; j < k && network_phase.isOk(); ++j) {
      network_phase =
          reduceScatterStrided(*impl.network, at(send, grid.column_start[j] * count, elem),
                               workspace + j * count * elem, count, grid.column_step[j] * count, dtype, op, stream);
    }
  }
  network_phase = finishNetworkPhase(impl, network_phase, stream, Status::ok());
  PR_RETURN_IF_ERROR(agreeOnMachineStep(impl, network_phase, "reduce its rows across machines", "reduceScatter"));
  // Inside the machine: the K partial rows reduced, block l to local rank l. Completed here: the next
  // call reuses the workspace it reads.
  Status machine_phase = impl.machine->reduceScatter(workspace, recv, count, dtype, op, stream);
  const Status machine_sync = impl.machine->synchronize(stream);
  return machine_phase.isOk() ? machine_sync : machine_phase;
}

Status MultiMachineCommunicator::allGather(const void* send, void* recv, std::size_t sendcount, DataType dtype,
                                           StreamHandle stream, MachineStrategy strategy) {
  Impl& impl = *impl_;
  const MachineLayout& layout = impl.layout;
  PR_RETURN_IF_ERROR(checkNotAborted(impl, "allGather"));
  PR_RETURN_IF_ERROR(checkAllGatherArguments(send, recv, sendcount, dtype, impl.rank, impl.size));
  PR_RETURN_IF_ERROR(checkStrategy(strategy, "allGather"));
  if (sendcount == 0) return Status::ok();
  const std::size_t elem = dataTypeSize(dtype);
  const std::size_t count = sendcount;
  PR_ASSIGN_OR_RETURN(strategy, strategyFor(impl, Collective::kAllGather, strategy, count * elem, "allGather"));
  const MachineBlockGrid& grid = *impl.grid;
  const auto machines = static_cast<std::size_t>(layout.machines);
  const auto k = static_cast<std::size_t>(layout.ranks_per_machine);
  const auto me = static_cast<std::size_t>(layout.machine);
  const auto local = static_cast<std::size_t>(layout.local_rank);

  if (strategy == MachineStrategy::kHierarchical) {
    // Between machines: column l (this local rank's block on every machine) straight into recv.
    Status network_phase = allGatherStrided(*impl.network, send, at(recv, grid.column_start[local] * count, elem),
                                            count, grid.column_step[local] * count, dtype, stream);
    network_phase = finishNetworkPhase(impl, network_phase, stream, Status::ok());
    PR_RETURN_IF_ERROR(agreeOnMachineStep(impl, network_phase, "gather its blocks across machines", "allGather"));
    // Inside the machine: every row, in place (local rank l holds block (m', l) already). Enqueued.
    for (std::size_t m = 0; m < machines; ++m) {
      std::byte* row = at(recv, grid.row_start[m] * count, elem);
      const std::size_t stride = grid.row_step[m] * count;
      PR_RETURN_IF_ERROR(
          allGatherStrided(*impl.machine, row + local * stride * elem, row, count, stride, dtype, stream));
    }
    return Status::ok();
  }

  // Flat. Inside the machine: this machine's row, then whole rows between machines, in place.
  std::byte* own_row = at(recv, grid.row_start[me] * count, elem);
  Status machine_phase =
      allGatherStrided(*impl.machine, send, own_row, count, grid.row_step[me] * count, dtype, stream);
  const Status machine_sync = impl.machine->synchronize(stream);
  if (machine_phase.isOk()) machine_phase = machine_sync;
  Status network_phase = Status::ok();
  if (machine_phase.isOk() && grid.rows_contiguous) {
    network_phase = impl.network->allGather(own_row, recv, k * count, dtype, stream);
  } else {
    for (std::size_t j = 0; j < k && machine_phase.isOk() && network_phase.isOk(); ++j) {
      std::byte* column = at(recv, grid.column_start[j] * count, elem);
      const std::size_t stride = grid.column_step[j] * count;
      network_phase =
          allGatherStrided(*impl.network, column + me * stride * elem, column, count, stride, dtype, stream);
    }
  }
  network_phase = finishNetworkPhase(impl, network_phase, stream, machine_phase);
  return agreeOnMachineStep(impl, machine_phase.isOk() ? network_phase : machine_phase,
                            "gather its rows across machines", "allGather");
}

StatusOr<MachineSelection> MultiMachineCommunicator::explainSelection(Collective collective, std::size_t count,
                                                                      DataType dtype) {
  Impl& impl = *impl_;
  // A first selection agrees on its table across the world: after an abort that exchange would wait.
  PR_RETURN_IF_ERROR(checkNotAborted(impl, "explainSelection"));
  if (collective == Collective::kAllReduce) return explainSelection(count, dtype);
  if (collective != Collective::kReduceScatter && collective != Collective::kAllGather) {
    return invalidArgumentError("explainSelection across machines: " +
                                (isValidCollective(collective)
                                     ? std::string(collectiveName(collective))
                                     : "collective value " + std::to_string(static_cast<int>(collective))) +
                                " has no strategies (allreduce, reduce-scatter and all-gather do)");
  }
  if (!isValidDataType(dtype)) {
    return invalidArgumentError("explainSelection across machines: unknown dtype value " +
                                std::to_string(static_cast<int>(dtype)));
  }
  PR_ASSIGN_OR_RETURN(MachineSelection s, predictMachineCollective(collective, *impl.machine, *impl.network,
                                                                   shapeOf(impl.layout, impl.grid), count, dtype));
  PR_ASSIGN_OR_RETURN(const MachineChoiceTable* table, choicesOf(impl, collective));
  s.chosen = table->choose(count * dataTypeSize(dtype));
  return s;
}

}  // namespace peerreduce
