// Communicator: its symmetric pool and stream leases - creation and the memory API.
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
  impl.pinned = std::make_shared<PinnedHostPool>(std::move(pinned));
  impl.channels.emplace(*impl.pool,
                        ScratchSizes{.preferred_bytes = impl.config.scratch_bytes,
                                     .minimum_bytes = minimumScratch(impl.config),
                                     .alignment_bytes = scratchAlignment(impl.config.memory)},
                        impl.rank);
  // Channel 0's scratch (every eager operation's) is taken now, while the pool is empty, so the
  // allreduce path normally makes no pool call at all.
  PR_ASSIGN_OR_RETURN(PoolBlock lease, impl.channels->leaseFirst());
  (void)lease;
  return Status::ok();
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

void Communicator::releaseScratch() { impl_->channels->releaseAll(); }

std::size_t Communicator::scratchBytesHeld() const { return impl_->channels->bytesHeld(); }

StatusOr<OperationChannel> operationChannel(Communicator::Impl& impl, StreamHandle stream) {
  OperationChannel where;
  if (StreamCaptures* captures = impl.transport->capabilities().stream_captures; captures != nullptr) {
    PR_ASSIGN_OR_RETURN(where.capture, captures->captureOf(stream));
  }
  where.channel = impl.channels->channelOf(where.capture);
  return where;
}

}  // namespace peerreduce
