// Batched operations on the simulator: the one-shot or two-shot plan runs over the batch's buffers laid
// end to end.
//
// The GPU reads and writes each buffer of a batch in place through a table; the simulator's steps
// address one input and one output, so it packs the items' inputs into one buffer when the operation
// starts (after its entry fence: where a kernel would first read them) and copies the packed output back
// into each item when it finishes. Every element is still folded in rank order by the plan, so each
// item's result is what a separate allreduce of it gives. The packing costs no virtual time: the GPU
// does not copy.
#include <cstring>
#include <string>

#include "engine.h"

namespace peerreduce::sim {

Status SimEngine::checkBatch(int rank, const ExecutionRequest& request) const {
  const std::string who =
      "simulated rank " + std::to_string(rank) + ": batch of " + std::to_string(request.batch.size()) + " items: ";
  if (request.batch.size() > kMaxBatchItemsPerSubmit) {
    return invalidArgumentError(who + "at most " + std::to_string(kMaxBatchItemsPerSubmit) + " per operation");
  }
  if (request.plan->algorithm != Algorithm::kOneShot && request.plan->algorithm != Algorithm::kTwoShot) {
    return invalidArgumentError(who + "needs a one-shot or two-shot plan, was given " +
                                std::string(algorithmName(request.plan->algorithm)));
  }
  if (request.send != nullptr || request.recv != nullptr) {
    return invalidArgumentError(who + "send and recv must be null (the items name the buffers)");
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < request.batch.size(); ++i) {
    const BatchItem& item = request.batch[i];
    if (item.count > 0 && (item.send == nullptr || item.recv == nullptr)) {
      return invalidArgumentError(who + "item " + std::to_string(i) + " has a null buffer");
    }
    total += item.count;
  }
  if (total != request.count) {
    return invalidArgumentError(who + "their counts add up to " + std::to_string(total) + ", the operation has " +
                                std::to_string(request.count));
  }
  return Status::ok();
}

void SimEngine::adoptBatch(Operation& op, std::size_t elem) {
  op.batch.assign(op.request.batch.begin(), op.request.batch.end());
  op.request.batch = {};  // the caller's span ends with submit
  op.packed_input.resize(op.request.count * elem);
  op.packed_output.resize(op.request.count * elem);
  op.request.send = op.packed_input.data();
  op.request.recv = op.packed_output.data();
}

void SimEngine::packBatch(Operation& op, std::size_t elem) {
  std::size_t at = 0;
  for (const BatchItem& item : op.batch) {
    const std::size_t bytes = item.count * elem;
    if (bytes > 0) std::memcpy(op.packed_input.data() + at, item.send, bytes);
    at += bytes;
  }
}

void SimEngine::unpackBatch(const Operation& op, std::size_t elem) {
  std::size_t at = 0;
  for (const BatchItem& item : op.batch) {
    const std::size_t bytes = item.count * elem;
    if (bytes > 0) std::memcpy(item.recv, op.packed_output.data() + at, bytes);
    at += bytes;
  }
}

}  // namespace peerreduce::sim
