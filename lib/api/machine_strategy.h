// How an allreduce crosses machines, priced: the cost model's prediction of each MachineStrategy from
// the machine and network communicators' own selections, and the per-size choice every rank of a
// world agrees on (peerreduce/multi_machine.h).
#pragma once

#include <array>
#include <cstddef>

#include "api/machine_block_grid.h"
#include "bootstrap/rank_agreement.h"
#include "peerreduce/communicator.h"
#include "peerreduce/multi_machine.h"
#include "peerreduce/status.h"

namespace peerreduce {

// How a count splits over a machine's K ranks: local rank i's share is elements [i x share, (i+1) x
// share); the tail (count - K x share, fewer than K elements) goes the flat way.
struct MachineSplit {
  std::size_t share = 0;
  std::size_t tail = 0;
  static MachineSplit of(std::size_t count, int ranks_per_machine) {
    const auto k = static_cast<std::size_t>(ranks_per_machine);
    return MachineSplit{count / k, count % k};
  }
};

// Both strategies priced for `count` elements of `dtype` from this rank's communicators (the plans
// they would run and the model's time of each phase, phases added).
StatusOr<MachineSelection> predictMachineStrategies(Communicator& machine, Communicator& network, int ranks_per_machine,
                                                    std::size_t count, DataType dtype);

// What the price of a reduce-scatter or all-gather across machines depends on besides the communicators.
struct MachineShape {
  int machines = 1;
  int ranks_per_machine = 1;
  bool rows_contiguous = false;  // MachineBlockGrid::rows_contiguous: a flat step is one collective, not K
};
MachineShape shapeOf(const MachineLayout& layout, const StatusOr<MachineBlockGrid>& grid);

// Both strategies of a reduce-scatter or all-gather of `count` elements per rank priced (the steps as
// multi_machine_collectives.cc runs them: hierarchical, M machine collectives (one per machine's blocks)
// and one network collective of `count`; flat, one machine collective and one network collective of
// K x count, or K of `count` where rows are not contiguous), with each strategy's plans described.
StatusOr<MachineSelection> predictMachineCollective(Collective collective, Communicator& machine, Communicator& network,
                                                    const MachineShape& shape, std::size_t count, DataType dtype);

// The choice per power-of-two size bucket (bucket b: messages of 2^b .. 2^(b+1)-1 bytes; the last
// takes everything larger), agreed by the world: each rank prices both strategies at every bucket,
// the ranks exchange their prices and every rank takes the slowest rank's price of each strategy, so
// every rank decides the same.
inline constexpr int kMachineBuckets = 40;
struct MachineChoiceTable {
  std::array<MachineStrategy, kMachineBuckets> chosen{};
  std::array<double, kMachineBuckets> hierarchical_us{};
  std::array<double, kMachineBuckets> flat_us{};
  static int bucketOf(std::size_t bytes);
  MachineStrategy choose(std::size_t bytes) const { return chosen[static_cast<std::size_t>(bucketOf(bytes))]; }
};

// Collective over the world's agreement: the table of `collective` (allreduce, reduce-scatter or
// all-gather; bucket sizes are the count per rank's bytes).
StatusOr<MachineChoiceTable> agreeMachineChoices(Collective collective, Communicator& machine, Communicator& network,
                                                 const MachineShape& shape, const RankAgreement& world);

}  // namespace peerreduce
