// The GPU blocks an operation's kernel uses, for Communicator::explainSelection: asked of the transport's
// KernelLaunches capability for the operation's first segment (the largest one: segments split the
// count to fit the scratch, select/segmenting.h).
#pragma once

#include <cstddef>
#include <memory>

#include "peerreduce/plan.h"
#include "peerreduce/status.h"
#include "peerreduce/transport.h"

namespace peerreduce {

// 0 where the transport has no KernelLaunches (it runs no kernels) or the count is 0; the transport's
// error where it refuses the plan.
StatusOr<int> firstSegmentKernelBlocks(Transport& transport, const std::shared_ptr<const Plan>& plan, std::size_t count,
                                       std::size_t elem_size, std::size_t scratch_bytes);

}  // namespace peerreduce
