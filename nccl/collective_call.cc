#include "nccl/collective_call.h"

#include <cstdint>
#include <limits>

#include "nccl/type_mapping.h"

namespace peerreduce::nccl {
namespace {

constexpr std::size_t kUnknownBytes = std::numeric_limits<std::size_t>::max();

std::size_t times(std::size_t a, std::size_t b) {
  if (a != 0 && b > kUnknownBytes / a) return kUnknownBytes;
  return a * b;
}

}  // namespace

CallShape shapeOf(const CollectiveCall& call) {
  CallShape shape;
  shape.kind = call.kind;
  shape.dtype = call.dtype;
  shape.op = call.op;
  const std::size_t element = ncclDataTypeBytes(call.dtype);
  std::size_t blocks = 1;
  // nranks blocks: reduce-scatter's input, all-gather's and gather's output, scatter's input, all-to-all's
  // buffers (nccl-tests' sizes).
  if (call.kind == CallKind::kReduceScatter || call.kind == CallKind::kAllGather || call.kind == CallKind::kAlltoAll ||
      call.kind == CallKind::kGather || call.kind == CallKind::kScatter) {
    blocks = static_cast<std::size_t>(call.comm->size);
  }
  shape.bytes = element == 0 ? kUnknownBytes : times(times(call.count, blocks), element);
  return shape;
}

int forwardCall(RealNccl& real, const CollectiveCall& call) {
  void* comm = call.real_comm;
  switch (call.kind) {
    case CallKind::kAllReduce:
      return real.allReduce(call.send, call.recv, call.count, call.dtype, call.op, comm, call.stream);
    case CallKind::kReduceScatter:
      return real.reduceScatter(call.send, call.recv, call.count, call.dtype, call.op, comm, call.stream);
    case CallKind::kAllGather:
      return real.allGather(call.send, call.recv, call.count, call.dtype, comm, call.stream);
    case CallKind::kBroadcast:
      return real.broadcast(call.send, call.recv, call.count, call.dtype, call.root, comm, call.stream);
    case CallKind::kBcast:
      return real.bcast(call.recv, call.count, call.dtype, call.root, comm, call.stream);
    case CallKind::kReduce:
      return real.reduce(call.send, call.recv, call.count, call.dtype, call.op, call.root, comm, call.stream);
    case CallKind::kSend:
      return real.send(call.send, call.count, call.dtype, call.root, comm, call.stream);
    case CallKind::kRecv:
      return real.recv(call.recv, call.count, call.dtype, call.root, comm, call.stream);
    case CallKind::kAlltoAll:
      return real.alltoAll(call.send, call.recv, call.count, call.dtype, comm, call.stream);
    case CallKind::kGather:
      return real.gather(call.send, call.recv, call.count, call.dtype, call.root, comm, call.stream);
    case CallKind::kScatter:
      return real.scatter(call.send, call.recv, call.count, call.dtype, call.root, comm, call.stream);
  }
  return toInt(NcclResult::kInternalError);
}

prResult_t takeCall(const CollectiveCall& call) {
  prComm_t comm = call.comm->peer.comm;
  // Simulated worlds have no streams: the operation completes in prCommSynchronize instead.
  void* stream = call.comm->peer.on_simulator ? nullptr : call.stream;
  switch (call.kind) {
    case CallKind::kAllReduce:
      return prAllReduce(call.send, call.recv, call.count, toPrDataType(call.dtype), toPrRedOp(call.op), comm, stream);
    case CallKind::kReduceScatter:
      return prReduceScatter(call.send, call.recv, call.count, toPrDataType(call.dtype), toPrRedOp(call.op), comm,
                             stream);
    case CallKind::kAllGather:
      return prAllGather(call.send, call.recv, call.count, toPrDataType(call.dtype), comm, stream);
    case CallKind::kBroadcast:
      return prBroadcast(call.send, call.recv, call.count, toPrDataType(call.dtype), call.root, comm, stream);
    case CallKind::kBcast:
      // In place: the root's buffer is its send buffer, every other rank's its receive buffer.
      return prBroadcast(call.recv, call.recv, call.count, toPrDataType(call.dtype), call.root, comm, stream);
    case CallKind::kReduce:
    case CallKind::kSend:
    case CallKind::kRecv:
    case CallKind::kAlltoAll:
    case CallKind::kGather:
    case CallKind::kScatter:
      break;
  }
  return prInternalError;
}

}  // namespace peerreduce::nccl
