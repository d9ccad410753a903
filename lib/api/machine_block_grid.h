// Where each world rank's block lies in a reduce-scatter's or all-gather's buffer of every block, seen as
// a grid of machines x local ranks (docs/MULTI_MACHINE.md, "Reduce-scatter and all-gather"). Each step
// across machines works on one row (the blocks of one machine's ranks) or one column (the blocks of one
// local rank on every machine), and runs as one strided collective (api/strided_collectives.h) when
// that row's or column's blocks are evenly spaced: true when ranks are placed machine by machine
// (row steps 1) or round robin over machines (column steps 1), and for any placement whose rows and
// columns are arithmetic.
#pragma once

#include <cstddef>
#include <vector>

#include "peerreduce/multi_machine.h"
#include "peerreduce/status.h"

namespace peerreduce {

struct MachineBlockGrid {
  // World rank of (machine m, local rank l) = row_start[m] + l x row_step[m] = column_start[l] + m x
  // column_step[l]; every step is at least 1.
  std::vector<std::size_t> row_start;
  std::vector<std::size_t> row_step;
  std::vector<std::size_t> column_start;
  std::vector<std::size_t> column_step;
  // Ranks placed machine by machine (row m is world ranks m x K .. m x K + K - 1): a whole row is one
  // contiguous block, so a step over every row's blocks is one collective instead of one per column.
  bool rows_contiguous = false;
};

// kUnsupported naming the first machine or local rank whose blocks are not evenly spaced.
StatusOr<MachineBlockGrid> machineBlockGrid(const MachineLayout& layout);

}  // namespace peerreduce
