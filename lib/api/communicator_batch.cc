// Communicator::allreduceBatch: many small allreduces as few operations.
//
// Why. A small allreduce costs mostly its fixed part (a launch, one round of signals), so N small
// tensors cost N times that when reduced one by one. A batch runs as one one-shot or two-shot
// operation over all of them (one kernel launch on GPUs: the low-latency one-shot or two-shot reads
// and writes every buffer through a table of them), so the fixed part is paid once per group.
//
// Grouping. Items are taken in order; a group holds at most kMaxBatchItemsPerSubmit items whose
// sizes, each rounded up to 16 bytes, add up to at most the larger of the transport's maxBatchBytes
// for one-shot and two-shot (each within one segment of scratch). A group runs as the algorithm the
// selector picks for its size where that shape carries it, else as the other. An item too large for
// any group runs as an ordinary allreduce, in its place in the order; so does a group of one. Every
// rank gives the same counts in the same order and the transports report the same capacities, so
// every rank forms the same groups and submits the same sequence of operations. With no capacity (a
// transport without batches, or a forced algorithm other than one-shot or two-shot) every item runs
// as an ordinary allreduce: the results are the same, only slower.
//
// Results: each item's elements are folded in rank order, as by any one-shot or two-shot, so each
// item's output equals what a separate one-shot or two-shot allreduce of it gives, bit for bit.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "api/argument_checks.h"
#include "api/communicator_impl.h"
#include "api/operation_submit.h"
#include "peerreduce/communicator.h"
#include "select/segmenting.h"
#include "util/log.h"

namespace peerreduce {
namespace {

constexpr std::size_t kBatchVectorBytes = 16;

std::size_t paddedBytes(std::size_t count, std::size_t elem) {
  return (count * elem + kBatchVectorBytes - 1) / kBatchVectorBytes * kBatchVectorBytes;
}

bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

std::string itemName(std::size_t index) { return "batch item " + std::to_string(index); }

// Within one group the buffers are read and written by one operation, so no item's output may
// overlap another item's input or output (separate calls would have ordered them; one launch cannot).
Status checkGroupDisjoint(std::span<const BatchItem> items, std::size_t first, std::size_t end, std::size_t elem,
                          int rank) {
  for (std::size_t i = first; i < end; ++i) {
    const std::size_t bi = items[i].count * elem;
    for (std::size_t j = i + 1; j < end; ++j) {
      const std::size_t bj = items[j].count * elem;
      const bool clash = overlaps(items[i].recv, bi, items[j].recv, bj) ||
                         overlaps(items[i].recv, bi, items[j].send, bj) ||
                         overlaps(items[i].send, bi, items[j].recv, bj);
      if (clash) {
        return invalidArgumentError("allreduceBatch on rank " + std::to_string(rank) + ": " + itemName(i) + " and " +
                                    itemName(j) +
                                    " overlap (an output of one is the input or output of the other); "
                                    "items reduced together must use disjoint buffers");
      }
    }
  }
  return Status::ok();
}

// A shape a group may run as: its algorithm, the communicator's candidate of it (null: none), and the
// most one operation of it carries (0: none).
struct BatchShape {
  Algorithm algorithm = Algorithm::kOneShot;
  const Candidate* candidate = nullptr;
  std::size_t capacity = 0;
};

// The shape for a group of `bytes`: the selector's choice (`preferred`) where it can carry the group,
// else whichever can; null when neither can. A two-shot needs a vector per rank. Every rank gets the
// same answer from the same inputs.
const BatchShape* shapeFor(const std::array<BatchShape, 2>& shapes, std::size_t bytes, int world_size,
                           Algorithm preferred) {
  auto carries = [&](const BatchShape& shape) {
    if (shape.capacity < bytes) return false;
    return shape.algorithm != Algorithm::kTwoShot || bytes >= static_cast<std::size_t>(world_size) * kBatchVectorBytes;
  };
  for (const BatchShape& shape : shapes) {
    if (shape.algorithm == preferred && carries(shape)) return &shape;
  }
  for (const BatchShape& shape : shapes) {
    if (carries(shape)) return &shape;
  }
  return nullptr;
}

}  // namespace

Status Communicator::allreduceBatch(std::span<const BatchItem> items, DataType dtype, ReduceOp op,
                                    StreamHandle stream) {
  Impl& impl = *impl_;
  if (aborted()) {
    return abortedError("rank " + std::to_string(impl.rank) +
                        ": allreduceBatch on a communicator that was aborted; destroy it and create a new one");
  }
  if (items.size() > kMaxBatchItems) {
    return invalidArgumentError("allreduceBatch on rank " + std::to_string(impl.rank) + ": " +
                                std::to_string(items.size()) + " items; at most " + std::to_string(kMaxBatchItems) +
                                " per call");
  }
  // Every item is checked before anything is submitted, so a bad item leaves every output untouched.
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Status checked = checkAllreduceArguments(items[i].send, items[i].recv, items[i].count, dtype, op, impl.rank);
    if (!checked.isOk()) return checked.withContext(itemName(i));
  }
  const std::size_t elem = dataTypeSize(dtype);

  // The batchable shapes this communicator may run (out-of-place plans: the batch's buffers are read
  // through a table, never in place as one buffer) and how much one operation of each carries: the
  // transport's limit, within one segment of scratch.
  PR_ASSIGN_OR_RETURN(const OperationChannel where, operationChannel(impl, stream));
  std::array<BatchShape, 2> shapes{BatchShape{Algorithm::kOneShot}, BatchShape{Algorithm::kTwoShot}};
  const BatchSubmit* batches = impl.transport->capabilities().batch_submit;  // null: no batches
  for (BatchShape& shape : shapes) {
    shape.candidate = impl.allreduce.candidateOf(shape.algorithm);
    shape.capacity = shape.candidate != nullptr && batches != nullptr ? batches->maxBatchBytes(shape.algorithm) : 0;
    if (shape.capacity > 0) {
      PR_ASSIGN_OR_RETURN(const PoolBlock scratch, leaseScratch(impl, where.channel));
      shape.capacity =
          std::min(shape.capacity, maxSegmentCount(*shape.candidate->plans[0], elem, scratch.size()) * elem);
    }
  }
  const std::size_t capacity = std::max(shapes[0].capacity, shapes[1].capacity);

  // Groups, then their submission; the checks of every group come first, so nothing is submitted when
  // any group is refused.
  struct Group {
    std::size_t first = 0;
    std::size_t end = 0;
    std::size_t count = 0;  // elements over the group's items
    std::size_t bytes = 0;  // their bytes, each item rounded up to 16
  };
  std::array<Group, kMaxBatchItems> groups;
  std::size_t group_count = 0;
  for (std::size_t i = 0; i < items.size();) {
    if (items[i].count == 0) {
      ++i;
      continue;
    }
    Group g{i, i, 0, 0};
    std::size_t& bytes = g.bytes;
    while (g.end < items.size() && g.end - g.first < kMaxBatchItemsPerSubmit) {
      const std::size_t next = paddedBytes(items[g.end].count, elem);
      if (items[g.end].count != 0 && bytes + next > capacity) break;
      bytes += items[g.end].count == 0 ? 0 : next;
      g.count += items[g.end].count;
      ++g.end;
    }
    if (g.end == g.first) g.end = g.first + 1;  // too large for a group: an ordinary allreduce
    PR_RETURN_IF_ERROR(checkGroupDisjoint(items, g.first, g.end, elem, impl.rank));
    groups[group_count++] = g;
    i = g.end;
  }

  for (std::size_t k = 0; k < group_count; ++k) {
    const Group& g = groups[k];
    std::size_t nonempty = 0;
    for (std::size_t i = g.first; i < g.end; ++i) nonempty += items[i].count != 0 ? 1 : 0;
    const BatchShape* shape =
        nonempty > 1 ? shapeFor(shapes, g.bytes, impl.size, impl.allreduce.selector->choose(g.bytes)) : nullptr;
    if (shape == nullptr) {  // one item, or none of the shapes carries the group: ordinary allreduces
      for (std::size_t i = g.first; i < g.end; ++i) {
        if (items[i].count == 0) continue;
        PR_RETURN_IF_ERROR(allreduce(items[i].send, items[i].recv, items[i].count, dtype, op, stream));
      }
      continue;
    }
    PR_ASSIGN_OR_RETURN(const PoolBlock scratch, leaseScratch(impl, where.channel));
    Operation operation;
    operation.plan = shape->candidate->plans[0];
    operation.algorithm = shape->algorithm;
    operation.dtype = dtype;
    operation.op = op;
    operation.count = g.count;
    operation.batch = items.subspan(g.first, g.end - g.first);
    operation.batch_items = static_cast<int>(nonempty);
    PR_TRACE(impl.rank, "allreduceBatch: %zu items, %zu x %s %s as one %s", g.end - g.first, g.count,
             std::string(dataTypeName(dtype)).c_str(), std::string(reduceOpName(op)).c_str(),
             std::string(algorithmName(shape->algorithm)).c_str());
    PR_RETURN_IF_ERROR(submitOperation(impl, operation, where, scratch, g.count, stream));
  }
  return Status::ok();
}

}  // namespace peerreduce
