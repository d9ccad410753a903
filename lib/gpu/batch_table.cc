#include "gpu/batch_table.h"

#include <string>

namespace peerreduce::gpu {

StatusOr<std::uint64_t> fillBatchTable(const ExecutionRequest& request, std::size_t elem, int rank, BatchTable& table) {
  static_assert(kMaxBatchTableItems == kMaxBatchItemsPerSubmit);
  constexpr std::uint64_t kVectorBytes = 16;  // the kernels' load and store width
  const std::string who =
      "rank " + std::to_string(rank) + ": batch of " + std::to_string(request.batch.size()) + " items: ";
  if (request.batch.size() > kMaxBatchItemsPerSubmit) {
    return invalidArgumentError(who + "at most " + std::to_string(kMaxBatchItemsPerSubmit) + " per operation");
  }
  if (request.send != nullptr || request.recv != nullptr) {
    return invalidArgumentError(who + "send and recv must be null (the items name the buffers)");
  }
  table.items = 0;
  table.reserved = 0;
  std::uint64_t vectors = 0;
  std::size_t total = 0;
  for (std::size_t i = 0; i < request.batch.size(); ++i) {
    const BatchItem& item = request.batch[i];
    total += item.count;
    if (item.count == 0) continue;
    if (item.send == nullptr || item.recv == nullptr) {
      return invalidArgumentError(who + "item " + std::to_string(i) + " has a null buffer");
    }
    const std::uint64_t bytes = static_cast<std::uint64_t>(item.count) * elem;
    table.item[table.items++] = BatchTableItem{item.send, item.recv, bytes, vectors};
    vectors += (bytes + kVectorBytes - 1) / kVectorBytes;
  }
  if (total != request.count || table.items == 0) {
    return invalidArgumentError(who + "their counts add up to " + std::to_string(total) + ", the operation has " +
                                std::to_string(request.count) + " (and needs at least one non-empty item)");
  }
  return vectors * kVectorBytes;
}

}  // namespace peerreduce::gpu
