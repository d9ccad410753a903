// The blocks of a world that spans machines as a grid: see machine_block_grid.h.
#include "api/machine_block_grid.h"

#include <string>

namespace peerreduce {
namespace {

// The step of the arithmetic sequence `ranks` (1 for a single rank), or 0 when it is not one with a
// positive step.
std::size_t stepOf(const std::vector<int>& ranks) {
  if (ranks.size() < 2) return 1;
  const int step = ranks[1] - ranks[0];
  if (step < 1) return 0;
  for (std::size_t i = 2; i < ranks.size(); ++i) {
    if (ranks[i] - ranks[i - 1] != step) return 0;
  }
  return static_cast<std::size_t>(step);
}

std::string listOf(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

}  // namespace

StatusOr<MachineBlockGrid> machineBlockGrid(const MachineLayout& layout) {
  MachineBlockGrid grid;
  const char* why =
      " are not evenly spaced in world rank order, so their blocks are not one strided range of the buffer; place "
      "ranks machine by machine or round robin over machines";
  for (int m = 0; m < layout.machines; ++m) {
    const std::vector<int>& row = layout.ranks_of_machine[static_cast<std::size_t>(m)];
    const std::size_t step = stepOf(row);
    if (step == 0) {
      return unsupportedError("the ranks of machine '" + layout.machine_names[static_cast<std::size_t>(m)] + "' (" +
                              listOf(row) + ")" + why);
    }
    grid.row_start.push_back(static_cast<std::size_t>(row.front()));
    grid.row_step.push_back(step);
  }
  grid.rows_contiguous = true;
  for (int m = 0; m < layout.machines; ++m) {
    const auto i = static_cast<std::size_t>(m);
    const bool in_order = grid.row_start[i] == i * static_cast<std::size_t>(layout.ranks_per_machine);
    grid.rows_contiguous = grid.rows_contiguous && in_order && (grid.row_step[i] == 1 || layout.ranks_per_machine == 1);
  }
  for (int l = 0; l < layout.ranks_per_machine; ++l) {
    std::vector<int> column;
    for (int m = 0; m < layout.machines; ++m) column.push_back(layout.worldRank(m, l));
    const std::size_t step = stepOf(column);
    if (step == 0) {
      return unsupportedError("local rank " + std::to_string(l) + " of every machine (world ranks " + listOf(column) +
                              ")" + why);
    }
    grid.column_start.push_back(static_cast<std::size_t>(column.front()));
    grid.column_step.push_back(step);
  }
  return grid;
}

}  // namespace peerreduce
