// Pricing and agreeing on how an allreduce crosses machines: see machine_strategy.h.
#include "api/machine_strategy.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace peerreduce {

const char* machineStrategyName(MachineStrategy strategy) {
  switch (strategy) {
    case MachineStrategy::kAuto:
      return "auto";
    case MachineStrategy::kHierarchical:
      return "hierarchical";
    case MachineStrategy::kFlat:
      return "flat";
  }
  return "invalid";
}

namespace {

struct Priced {
  double us = 0.0;
  std::string plan;
};

// The chosen plan's prediction (the selector may be forced or tuned away from the cheapest).
StatusOr<Priced> price(Communicator& comm, Collective collective, std::size_t count, DataType dtype) {
  if (count == 0) return Priced{};
  PR_ASSIGN_OR_RETURN(const SelectionReport report, comm.explainSelection(collective, count, dtype, 0));
  if (report.candidates.empty()) return internalError("a selection without candidates");
  const AlgorithmEstimate* chosen = &report.candidates.front();
  for (const AlgorithmEstimate& c : report.candidates) {
    if (c.algorithm == report.chosen && c.plan == report.plan) chosen = &c;
  }
  return Priced{chosen->predicted_us, report.plan};
}

}  // namespace

StatusOr<MachineSelection> predictMachineStrategies(Communicator& machine, Communicator& network, int ranks_per_machine,
                                                    std::size_t count, DataType dtype) {
  const MachineSplit split = MachineSplit::of(count, ranks_per_machine);
  MachineSelection s;
  PR_ASSIGN_OR_RETURN(const Priced rs, price(machine, Collective::kReduceScatter, split.share, dtype));
  PR_ASSIGN_OR_RETURN(const Priced net, price(network, Collective::kAllReduce, split.share, dtype));
  PR_ASSIGN_OR_RETURN(const Priced ag, price(machine, Collective::kAllGather, split.share, dtype));
  PR_ASSIGN_OR_RETURN(const Priced tail_machine, price(machine, Collective::kAllReduce, split.tail, dtype));
  PR_ASSIGN_OR_RETURN(const Priced tail_net, price(network, Collective::kAllReduce, split.tail, dtype));
  PR_ASSIGN_OR_RETURN(const Priced whole_machine, price(machine, Collective::kAllReduce, count, dtype));
  PR_ASSIGN_OR_RETURN(const Priced whole_net, price(network, Collective::kAllReduce, count, dtype));
  s.hierarchical_us = rs.us + net.us + ag.us + tail_machine.us + tail_net.us;
  s.flat_us = whole_machine.us + whole_net.us;
  s.machine_reduce_scatter = rs.plan;
  s.network_allreduce = net.plan;
  s.machine_all_gather = ag.plan;
  s.machine_allreduce = whole_machine.plan;
  s.network_flat_allreduce = whole_net.plan;
  s.chosen = s.flat_us < s.hierarchical_us ? MachineStrategy::kFlat : MachineStrategy::kHierarchical;
  return s;
}

MachineShape shapeOf(const MachineLayout& layout, const StatusOr<MachineBlockGrid>& grid) {
  return MachineShape{layout.machines, layout.ranks_per_machine, grid.isOk() && grid->rows_contiguous};
}

StatusOr<MachineSelection> predictMachineCollective(Collective collective, Communicator& machine, Communicator& network,
                                                    const MachineShape& shape, std::size_t count, DataType dtype) {
  if (collective != Collective::kReduceScatter && collective != Collective::kAllGather) {
    return invalidArgumentError(std::string("no multi-machine pricing of ") + std::string(collectiveName(collective)));
  }
  const auto k = static_cast<std::size_t>(shape.ranks_per_machine);
  const std::string name(collectiveName(collective));
  PR_ASSIGN_OR_RETURN(const Priced machine_step, price(machine, collective, count, dtype));
  PR_ASSIGN_OR_RETURN(const Priced network_step, price(network, collective, count, dtype));
  // Flat: a whole row of K blocks crosses the network, as one block when rows are contiguous.
  const std::size_t flat_network_count = shape.rows_contiguous ? k * count : count;
  const double flat_network_calls = shape.rows_contiguous ? 1.0 : static_cast<double>(k);
  PR_ASSIGN_OR_RETURN(const Priced flat_network, price(network, collective, flat_network_count, dtype));
  MachineSelection s;
  s.hierarchical_us = static_cast<double>(shape.machines) * machine_step.us + network_step.us;
  s.flat_us = machine_step.us + flat_network_calls * flat_network.us;
  const std::string per_machine =
      "machine " + name + " x " + std::to_string(shape.machines) + " (one per machine's blocks): " + machine_step.plan;
  const std::string per_column = "network " + name + " of each local rank's blocks: " + network_step.plan;
  const std::string rows =
      "network " + name + " of whole machines' blocks" +
      (shape.rows_contiguous ? std::string(": ") : " x " + std::to_string(shape.ranks_per_machine) + ": ") +
      flat_network.plan;
  const std::string machine_once = "machine " + name + ": " + machine_step.plan;
  if (collective == Collective::kReduceScatter) {
    s.hierarchical_plans = per_machine + "; " + per_column;
    s.flat_plans = rows + "; " + machine_once;
  } else {
    s.hierarchical_plans = per_column + "; " + per_machine;
    s.flat_plans = machine_once + "; " + rows;
  }
  s.chosen = s.flat_us < s.hierarchical_us ? MachineStrategy::kFlat : MachineStrategy::kHierarchical;
  return s;
}

int MachineChoiceTable::bucketOf(std::size_t bytes) {
  const int b = bytes == 0 ? 0 : static_cast<int>(std::bit_width(bytes)) - 1;
  return std::min(b, kMachineBuckets - 1);
}

namespace {

struct PriceRecord {
  std::array<double, kMachineBuckets> hierarchical_us;
  std::array<double, kMachineBuckets> flat_us;
};

}  // namespace

StatusOr<MachineChoiceTable> agreeMachineChoices(Collective collective, Communicator& machine, Communicator& network,
                                                 const MachineShape& shape, const RankAgreement& world) {
  PriceRecord mine{};
  Status local = Status::ok();
  for (int b = 0; b < kMachineBuckets && local.isOk(); ++b) {
    // The bucket's middle (2^b x 1.5 bytes) in 4-byte elements: what a message of this bucket costs.
    const std::size_t bytes = (std::size_t{3} << b) / 2;
    const std::size_t count = std::max<std::size_t>(1, bytes / 4);
    auto priced = collective == Collective::kAllReduce
                      ? predictMachineStrategies(machine, network, shape.ranks_per_machine, count, DataType::kFloat32)
                      : predictMachineCollective(collective, machine, network, shape, count, DataType::kFloat32);
    if (!priced.isOk()) {
      local = priced.status();
      break;
    }
    mine.hierarchical_us[static_cast<std::size_t>(b)] = priced->hierarchical_us;
    mine.flat_us[static_cast<std::size_t>(b)] = priced->flat_us;
  }
  const std::string what = "price how " + std::string(collectiveName(collective)) + " crosses machines";
  PR_RETURN_IF_ERROR(world.outcome(local, what.c_str()));
  PR_ASSIGN_OR_RETURN(const std::vector<PriceRecord> all, world.gather(mine));
  MachineChoiceTable table;
  for (std::size_t b = 0; b < kMachineBuckets; ++b) {
    for (const PriceRecord& r : all) {
      table.hierarchical_us[b] = std::max(table.hierarchical_us[b], r.hierarchical_us[b]);
      table.flat_us[b] = std::max(table.flat_us[b], r.flat_us[b]);
    }
    table.chosen[b] =
        table.flat_us[b] < table.hierarchical_us[b] ? MachineStrategy::kFlat : MachineStrategy::kHierarchical;
  }
  return table;
}

}  // namespace peerreduce
