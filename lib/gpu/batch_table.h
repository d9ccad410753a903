// The kernels' table of a batch (Communicator::allreduceBatch on GPUs), filled by the host. Host-only:
// the GPU transport calls it for every batched launch, and it runs in every build.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device_plan.h"
#include "peerreduce/status.h"
#include "peerreduce/transport.h"

namespace peerreduce::gpu {

// The table of `request`'s non-empty items (elements of `elem` bytes), each starting on a 16-byte vector
// of its own; returns the bytes of all their vectors. The communicator sends well-formed batches; this
// checks what the kernel relies on (at most kMaxBatchItemsPerSubmit items, null send and recv, no null
// item buffer, counts that add up to the operation's, at least one non-empty item), so a malformed request
// is refused with kInvalidArgument naming `rank` instead of reading past a buffer.
StatusOr<std::uint64_t> fillBatchTable(const ExecutionRequest& request, std::size_t elem, int rank, BatchTable& table);

}  // namespace peerreduce::gpu
