// One batched allreduce test case (Communicator::allreduceBatch), run and checked on a TestWorld.
//
// Every item's payload derives from (seed, item, rank), so each rank computes every item's reference by
// itself. runBatchCase checks, on every local rank: the call succeeds; every item's output equals the
// independent reference (exact for integers, within the per-dtype tolerance for floats); bytes around
// and between the items are untouched, and so are out-of-place items' inputs; all ranks hold identical
// bits; on the simulator no race; on hardware the GPU's bits equal the simulator's for the same batch.
// The verdict is collective.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "allreduce_case.h"
#include "test_world.h"

namespace peerreduce::testing {

struct BatchCaseItem {
  std::size_t count = 0;
  bool in_place = false;
  std::size_t offset = 0;  // elements of misalignment before the item (unaligned starts)
};

struct BatchCase {
  int world_size = 1;
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  std::vector<BatchCaseItem> items;
  std::uint64_t seed = 1;

  std::string describe() const;
};

CaseOutcome runBatchCase(TestWorld& world, const BatchCase& c);

}  // namespace peerreduce::testing
