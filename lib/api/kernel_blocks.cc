#include "api/kernel_blocks.h"

#include <algorithm>

#include "select/segmenting.h"

namespace peerreduce {

StatusOr<int> firstSegmentKernelBlocks(Transport& transport, const std::shared_ptr<const Plan>& plan, std::size_t count,
                                       std::size_t elem_size, std::size_t scratch_bytes) {
  KernelLaunches* launches = transport.capabilities().kernel_launches;
  if (launches == nullptr || count == 0 || plan == nullptr) return 0;
  const std::size_t segment = maxSegmentCount(*plan, elem_size, scratch_bytes);
  if (segment == 0) return 0;  // nothing fits: the operation itself fails with kOutOfMemory
  return launches->kernelBlocks(plan, std::min(count, segment), elem_size);
}

}  // namespace peerreduce
