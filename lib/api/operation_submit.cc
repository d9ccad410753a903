#include "api/operation_submit.h"

#include <algorithm>
#include <string>

#include "select/segmenting.h"
#include "util/hash.h"

namespace peerreduce {
namespace {

// What every rank must agree on for `operation` (api/operation_log.h): its user call, not its segments.
OperationDescriptor descriptorOf(const Operation& operation) {
  OperationDescriptor d;
  d.collective = operation.plan->collective;
  d.root = operation.plan->root;
  d.dtype = operation.dtype;
  d.op = operation.op;
  d.count = operation.count;
  if (!operation.batch.empty()) {
    Fnv1a counts;
    for (const BatchItem& item : operation.batch) counts.add(static_cast<std::uint64_t>(item.count));
    d.items = operation.batch.size();
    d.items_hash = counts.value();
  }
  return d;
}

}  // namespace

Status submitOperation(Communicator::Impl& impl, const Operation& operation, StreamHandle stream, const char* call) {
  PR_ASSIGN_OR_RETURN(const OperationChannel where, operationChannel(impl, stream));
  // The copy pins the scratch in place until the segments are submitted.
  PR_ASSIGN_OR_RETURN(const PoolBlock scratch, leaseScratch(impl, where.channel));
  const Plan& plan = *operation.plan;
  const std::size_t elem = dataTypeSize(operation.dtype);
  const std::size_t segment = maxSegmentCount(plan, elem, scratch.size());
  if (segment == 0) {
    return outOfMemoryError(
        std::string(call) + " on rank " + std::to_string(impl.rank) + ": " +
        std::string(algorithmName(plan.algorithm)) + " needs " + std::to_string(plan.scratch_slots) +
        " scratch slots but only " + std::to_string(scratch.size()) + " bytes of scratch exist (preferred " +
        std::to_string(impl.config.scratch_bytes) + "); raise PEERREDUCE_SCRATCH_BYTES, or free symmetric pool blocks");
  }
  return submitOperation(impl, operation, where, scratch, segment, stream);
}

Status submitOperation(Communicator::Impl& impl, const Operation& operation, const OperationChannel& where,
                       const PoolBlock& scratch, std::size_t segment, StreamHandle stream) {
  // Before anything is enqueued: a rank that disagrees with a peer launches nothing.
  if (impl.operation_log) PR_RETURN_IF_ERROR(impl.operation_log->post(descriptorOf(operation)));
  const std::size_t elem = dataTypeSize(operation.dtype);
  const bool batched = !operation.batch.empty();
  ExecutionRequest request;
  request.plan = operation.plan;
  request.dtype = operation.dtype;
  request.op = operation.op;
  request.timeout = impl.config.timeout;
  request.scratch_offset = scratch.offset();
  request.channel = where.channel;
  request.capture = where.capture;
  request.batch = operation.batch;
  if (batched) segment = operation.count;  // one launch over the whole table
  // One submit cycling through the scratch, where the transport asks for it (every rank asks alike).
  if (!batched) {
    StreamedSubmit* streamed = impl.transport->capabilities().streamed_submit;
    if (streamed != nullptr &&
        streamed->streams(operation.plan, operation.dtype, operation.count, segment, scratch.size())) {
      segment = operation.count;
      request.ring_bytes = scratch.size();
    }
  }
  if (impl.profiler) impl.profiler->begin(stream);
  Status submitted;
  int segments = 0;
  for (std::size_t done = 0; done < operation.count && submitted.isOk(); done += segment) {
    request.count = std::min(segment, operation.count - done);
    if (!batched) {
      request.send = static_cast<const std::byte*>(operation.send) + done * elem;
      request.recv = static_cast<std::byte*>(operation.recv) + done * elem;
    }
    request.layout = ChunkLayout::make(request.count, operation.plan->num_chunks, elem);
    // Blocks are the user's per-rank count apart, unless the caller spaced them (strided_collectives.h).
    request.block_stride = operation.block_stride != 0 ? operation.block_stride : operation.count;
    submitted = impl.transport->submit(request, stream);
    segments += submitted.isOk() ? 1 : 0;
  }
  if (impl.profiler) {
    OperationProfile what;
    what.count = operation.count;
    what.bytes = operation.count * elem;
    what.dtype = operation.dtype;
    what.op = operation.op;
    what.algorithm = operation.algorithm;
    what.segments = segments;
    what.stream = where.channel;
    what.batch_items = operation.batch_items;
    impl.profiler->end(stream, what, submitted.isOk());
  }
  return submitted;
}

}  // namespace peerreduce
