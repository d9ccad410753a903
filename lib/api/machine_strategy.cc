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

StatusOr<MachineChoiceTable> agreeMachineChoices(Communicator& machine, Communicator& network, int ranks_per_machine,
                                                 const RankAgreement& world) {
  PriceRecord mine{};
  Status local = Status::ok();
  for (int b = 0; b < kMachineBuckets && local.isOk(); ++b) {
    // The bucket's middle (2^b x 1.5 bytes) in 4-byte elements: what a message of this bucket costs.
    const std::size_t bytes = (std::size_t{3} << b) / 2;
    const std::size_t count = std::max<std::size_t>(1, bytes / 4);
    auto priced = predictMachineStrategies(machine, network, ranks_per_machine, count, DataType::kFloat32);
    if (!priced.isOk()) {
      local = priced.status();
      break;
    }
    mine.hierarchical_us[static_cast<std::size_t>(b)] = priced->hierarchical_us;
    mine.flat_us[static_cast<std::size_t>(b)] = priced->flat_us;
  }
  PR_RETURN_IF_ERROR(world.outcome(local, "price how an allreduce crosses machines"));
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
