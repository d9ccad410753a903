#include "select/segmenting.h"

#include <limits>

namespace peerreduce {

std::size_t maxSegmentCount(const Plan& plan, std::size_t elem_size, std::size_t scratch_bytes) {
  if (plan.scratch_slots == 0) return std::numeric_limits<std::size_t>::max();
  const std::size_t slot_bytes =
      scratch_bytes / static_cast<std::size_t>(plan.scratch_slots) / kScratchSlotAlignBytes * kScratchSlotAlignBytes;
  const ChunkLayout unit = ChunkLayout::make(0, plan.num_chunks, elem_size);
  const std::size_t capacity = slot_bytes / elem_size / unit.align_elems * unit.align_elems;
  return capacity * static_cast<std::size_t>(plan.num_chunks);
}

}  // namespace peerreduce
