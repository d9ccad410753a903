#include "api/stream_leases.h"

#include <algorithm>
#include <string>

namespace peerreduce {

StatusOr<int> StreamLeases::slotOf(StreamHandle stream) {
  for (int slot = 0; slot < used_; ++slot) {
    if (slots_[static_cast<std::size_t>(slot)].stream == stream) return slot;
  }
  if (used_ == kMaxStreams) {
    return unsupportedError(
        "rank " + std::to_string(rank_) + ": an operation on a " + std::to_string(kMaxStreams + 1) +
        "th stream; a communicator gives at most " + std::to_string(kMaxStreams) +
        " streams their own signal area and scratch; reuse a stream or create another communicator");
  }
  slots_[static_cast<std::size_t>(used_)].stream = stream;
  return used_++;
}

std::size_t StreamLeases::target(int slot) const {
  if (slot == 0) return sizes_.preferred_bytes;
  const PoolBlock& held = slots_[static_cast<std::size_t>(slot)].scratch;
  const std::size_t available = pool_.stats().largest_free_block_bytes + (held.valid() ? held.size() : 0);
  const std::size_t share = available / static_cast<std::size_t>(kMaxStreams - slot);
  return std::max(std::min(sizes_.preferred_bytes, share), sizes_.minimum_bytes);
}

StatusOr<PoolBlock> StreamLeases::lease(int slot) {
  if (slot < 0 || slot >= used_) {
    return internalError("rank " + std::to_string(rank_) + ": scratch asked for stream slot " + std::to_string(slot) +
                         " of " + std::to_string(used_) + " in use");
  }
  return leaseSlot(slot);
}

StatusOr<PoolBlock> StreamLeases::leaseSlot(int slot) {
  Slot& s = slots_[static_cast<std::size_t>(slot)];
  PoolBlock& held = s.scratch;
  if (held.valid() && held.size() >= s.target_bytes) return held;
  s.target_bytes = target(slot);
  // Less than the target (an earlier exhaustion) or none: give it back first, so its range counts as
  // free, then take as much as the pool has. An exhaustion is symmetric (every rank's pool is alike).
  held.reset();
  auto block =
      pool_.allocateBestEffort(s.target_bytes, sizes_.minimum_bytes, BlockKind::kScratch, sizes_.alignment_bytes);
  if (!block.isOk()) {
    return block.status().withContext(
        "rank " + std::to_string(rank_) + ": no room for even the minimum scratch of " +
        std::to_string(sizes_.minimum_bytes) + " bytes (preferred " + std::to_string(s.target_bytes) +
        ", PEERREDUCE_SCRATCH_BYTES); release symmetric blocks (allocateSymmetric) or raise the pool");
  }
  held = std::move(block).value();
  return held;
}

void StreamLeases::releaseAll() {
  for (Slot& s : slots_) s.scratch.reset();
}

std::size_t StreamLeases::bytesHeld() const {
  std::size_t held = 0;
  for (const Slot& s : slots_) held += s.scratch.size();
  return held;
}

}  // namespace peerreduce
