// Communicator: its symmetric pool - creation, the scratch lease of each allreduce, and the memory API.
#include <algorithm>
#include <memory>
#include <string>

#include "api/communicator_impl.h"
#include "memory/host_allocator.h"
#include "peerreduce/communicator.h"
#include "peerreduce/plan.h"

namespace peerreduce {
namespace {

// Scratch slots start on kScratchSlotAlignBytes (plans' slot size is a multiple of it), so the block
// must too; a larger pool default alignment is kept.
std::size_t scratchAlignment(const MemorySettings& memory) {
  return std::max(kScratchSlotAlignBytes, memory.pool_alignment_bytes);
}

// The least scratch an allreduce accepts before it fails: kMinScratchBytes, the least any
// configuration may have, which every shipped plan over up to kMaxWorldSize ranks can run in (one
// element per chunk at least). Below it the operation would be mostly per-segment overhead.
std::size_t minimumScratch(const Config& config) { return std::min(config.scratch_bytes, kMinScratchBytes); }

// The scratch stream `slot` asks for: the first stream the preferred size (it is taken at creation, with
// the pool empty); each later one at most an even share of what is free for it and the streams that
// may still come, so that every one of the kMaxStreams streams finds scratch with the default settings
// (two preferred blocks would otherwise fill the default pool). Every rank's pool is in the same state,
// so every rank asks the same.
std::size_t scratchTarget(const Communicator::Impl& impl, int slot) {
  const std::size_t preferred = impl.config.scratch_bytes;
  if (slot == 0) return preferred;
  const PoolBlock& lease = impl.streams[static_cast<std::size_t>(slot)].scratch;
  const std::size_t available = impl.pool->stats().largest_free_block_bytes + (lease.valid() ? lease.size() : 0);
  const std::size_t share = available / static_cast<std::size_t>(kMaxStreams - slot);
  return std::max(std::min(preferred, share), minimumScratch(impl.config));
}

}  // namespace

Status createPool(Communicator::Impl& impl) {
  if (impl.config.scratch_bytes > impl.config.memory.pool_bytes) {
    return invalidArgumentError("scratch of " + std::to_string(impl.config.scratch_bytes) +
                                " bytes does not fit the symmetric pool of " +
                                std::to_string(impl.config.memory.pool_bytes) +
                                " bytes; raise PEERREDUCE_POOL_BYTES or lower PEERREDUCE_SCRATCH_BYTES");
  }
  PR_ASSIGN_OR_RETURN(SymmetricPool pool,
                      SymmetricPool::create(SymmetricPoolOptions::fromSettings(impl.config.memory, impl.rank)));
  impl.pool.emplace(std::move(pool));
  // Pinned memory is taken lazily by acquire; creating the pool only checks and records its limit.
  const PinnedHostPoolOptions pinned_options{.limit_bytes = impl.config.memory.pinned_limit_bytes, .rank = impl.rank};
  PR_ASSIGN_OR_RETURN(PinnedHostPool pinned, PinnedHostPool::create(pinned_options, platformHostAllocator()));
  impl.pinned.emplace(std::move(pinned));
  // Taken now, while the pool is empty, so the allreduce path normally makes no pool call at all.
  PR_ASSIGN_OR_RETURN(PoolBlock lease, leaseScratch(impl, 0));
  (void)lease;
  return Status::ok();
}

StatusOr<int> streamSlot(Communicator::Impl& impl, StreamHandle stream) {
  for (int slot = 0; slot < impl.streams_used; ++slot) {
    if (impl.streams[static_cast<std::size_t>(slot)].stream == stream) return slot;
  }
  if (impl.streams_used == kMaxStreams) {
    return unsupportedError(
        "rank " + std::to_string(impl.rank) + ": an allreduce on a " + std::to_string(kMaxStreams + 1) +
        "th stream; a communicator gives at most " + std::to_string(kMaxStreams) +
        " streams their own signal area and scratch; reuse a stream or create another communicator");
  }
  impl.streams[static_cast<std::size_t>(impl.streams_used)].stream = stream;
  return impl.streams_used++;
}

StatusOr<PoolBlock> leaseScratch(Communicator::Impl& impl, int slot) {
  auto& stream = impl.streams[static_cast<std::size_t>(slot)];
  PoolBlock& lease = stream.scratch;
  if (lease.valid() && lease.size() >= stream.target_bytes) return lease;
  stream.target_bytes = scratchTarget(impl, slot);
  const std::size_t preferred = stream.target_bytes;
  // Less than preferred (an earlier exhaustion) or none: give it back first, so its range counts as
  // free, then take as much as the pool has. Every rank's pool is in the same state, so every rank gets
  // the same size at the same offset and plans the same segments; an exhaustion is symmetric.
  lease.reset();
  auto block = impl.pool->allocateBestEffort(preferred, minimumScratch(impl.config), BlockKind::kScratch,
                                             scratchAlignment(impl.config.memory));
  if (!block.isOk()) {
    return block.status().withContext(
        "rank " + std::to_string(impl.rank) + ": no room for even the minimum scratch of " +
        std::to_string(minimumScratch(impl.config)) + " bytes (preferred " + std::to_string(preferred) +
        ", PEERREDUCE_SCRATCH_BYTES); release symmetric blocks (allocateSymmetric) or raise the pool");
  }
  lease = std::move(block).value();
  return lease;
}

PoolStats Communicator::memoryStats() const { return impl_->pool->stats(); }

std::size_t Communicator::defragment() { return impl_->pool->defragment().size(); }

StatusOr<SymmetricBlock> Communicator::allocateSymmetric(std::size_t bytes) {
  auto block = impl_->pool->allocate(bytes, BlockKind::kUserBuffer);
  if (!block.isOk()) {
    return block.status().withContext("allocateSymmetric(" + std::to_string(bytes) + ") on rank " +
                                      std::to_string(impl_->rank));
  }
  const std::size_t offset = block->offset();
  const std::size_t size = block->size();
  std::byte* region = impl_->region_host_address;
  return SymmetricBlock(std::make_shared<const PoolBlock>(std::move(block).value()), offset, size,
                        region != nullptr ? region + offset : nullptr);
}

void Communicator::releaseScratch() {
  for (auto& slot : impl_->streams) slot.scratch.reset();
}

std::size_t Communicator::scratchBytesHeld() const {
  std::size_t held = 0;
  for (const auto& slot : impl_->streams) held += slot.scratch.size();
  return held;
}

}  // namespace peerreduce
