#include "api/argument_checks.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

namespace peerreduce {
namespace {

std::string where(const char* call, int rank) { return std::string(call) + " on rank " + std::to_string(rank) + ": "; }

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

Status checkDataType(const std::string& at, DataType dtype) {
  if (isValidDataType(dtype)) return Status::ok();
  return invalidArgumentError(at + "unknown dtype value " + std::to_string(static_cast<int>(dtype)) + " (valid: 0.." +
                              std::to_string(kDataTypeCount - 1) + ", see peerreduce/types.h)");
}

Status checkReduceOp(const std::string& at, ReduceOp op) {
  if (isValidReduceOp(op)) return Status::ok();
  return invalidArgumentError(at + "unknown op value " + std::to_string(static_cast<int>(op)) + " (valid: 0.." +
                              std::to_string(kReduceOpCount - 1) + ", see peerreduce/types.h)");
}

// `count` x `blocks` elements of `dtype` fit the address space; `what` names the count as the caller
// spelled it ("count", "recvcount").
Status checkCountFits(const std::string& at, const char* what, std::size_t count, std::size_t blocks, DataType dtype) {
  const std::size_t elem = dataTypeSize(dtype);
  if (count <= std::numeric_limits<std::size_t>::max() / elem / blocks) return Status::ok();
  const std::string times = blocks > 1 ? std::to_string(blocks) + " ranks x " : "";
  return invalidArgumentError(at + times + what + " " + std::to_string(count) + " x " + std::to_string(elem) +
                              "-byte " + std::string(dataTypeName(dtype)) + " overflows the address space");
}

// One user buffer of `bytes` bytes: not null, inside the address space, aligned to its elements.
Status checkBuffer(const std::string& at, const char* name, const void* buffer, std::size_t bytes, std::size_t count,
                   DataType dtype) {
  if (buffer == nullptr) {
    return invalidArgumentError(at + name + " buffer is null with count " + std::to_string(count));
  }
  const std::size_t elem = dataTypeSize(dtype);
  const auto address = reinterpret_cast<std::uintptr_t>(buffer);
  if (address > std::numeric_limits<std::uintptr_t>::max() - bytes) {
    return invalidArgumentError(at + "buffer of " + std::to_string(bytes) + " bytes at " + hex(buffer) +
                                " runs past the end of the address space");
  }
  if (address % elem != 0) {
    return invalidArgumentError(at + name + " buffer " + hex(buffer) + " is not aligned to its " +
                                std::to_string(elem) + "-byte " + std::string(dataTypeName(dtype)) + " elements");
  }
  return Status::ok();
}

bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

// The collectives whose two buffers have one size: in place (the same pointer) or disjoint.
Status checkIdenticalOrDisjoint(const std::string& at, const void* send, const void* recv, std::size_t bytes,
                                const char* call) {
  if (send == recv || !overlaps(send, bytes, recv, bytes)) return Status::ok();
  return invalidArgumentError(
      at + "send " + hex(send) + " and recv " + hex(recv) + " overlap over " + std::to_string(bytes) +
      " bytes without being identical; pass the same pointer for an in-place " + call + " or disjoint buffers");
}

// The collectives whose two buffers differ in size (one holds every rank's block, the other one block):
// the small one is either exactly the calling rank's block of the large one (in place) or disjoint.
Status checkBlockAliasing(const std::string& at, const char* large_name, const void* large, const char* small_name,
                          const void* small, std::size_t block_bytes, int rank, int size, const char* count_name) {
  const std::size_t large_bytes = block_bytes * static_cast<std::size_t>(size);
  const auto* own_block = static_cast<const std::byte*>(large) + block_bytes * static_cast<std::size_t>(rank);
  if (small == own_block || !overlaps(large, large_bytes, small, block_bytes)) return Status::ok();
  return invalidArgumentError(at + small_name + " " + hex(small) + " overlaps " + large_name + " " + hex(large) +
                              " without being this rank's block of it; in place, " + small_name + " must be " +
                              large_name + " + rank x " + count_name + " elements (" + hex(own_block) +
                              "), otherwise the buffers must be disjoint");
}

}  // namespace

Status checkAllreduceArguments(const void* send, const void* recv, std::size_t count, DataType dtype, ReduceOp op,
                               int rank) {
  const std::string at = where("allreduce", rank);
  PR_RETURN_IF_ERROR(checkDataType(at, dtype));
  PR_RETURN_IF_ERROR(checkReduceOp(at, op));
  if (count == 0) return Status::ok();
  if (send == nullptr) return checkBuffer(at, "send", send, 0, count, dtype);
  if (recv == nullptr) return checkBuffer(at, "recv", recv, 0, count, dtype);
  PR_RETURN_IF_ERROR(checkCountFits(at, "count", count, 1, dtype));
  const std::size_t bytes = count * dataTypeSize(dtype);
  PR_RETURN_IF_ERROR(checkBuffer(at, "send", send, bytes, count, dtype));
  PR_RETURN_IF_ERROR(checkBuffer(at, "recv", recv, bytes, count, dtype));
  return checkIdenticalOrDisjoint(at, send, recv, bytes, "allreduce");
}

Status checkReduceScatterArguments(const void* send, const void* recv, std::size_t recvcount, DataType dtype,
                                   ReduceOp op, int rank, int size) {
  const std::string at = where("reduceScatter", rank);
  PR_RETURN_IF_ERROR(checkDataType(at, dtype));
  PR_RETURN_IF_ERROR(checkReduceOp(at, op));
  if (recvcount == 0) return Status::ok();
  PR_RETURN_IF_ERROR(checkCountFits(at, "recvcount", recvcount, static_cast<std::size_t>(size), dtype));
  const std::size_t block = recvcount * dataTypeSize(dtype);
  PR_RETURN_IF_ERROR(checkBuffer(at, "send", send, block * static_cast<std::size_t>(size), recvcount, dtype));
  PR_RETURN_IF_ERROR(checkBuffer(at, "recv", recv, block, recvcount, dtype));
  return checkBlockAliasing(at, "send", send, "recv", recv, block, rank, size, "recvcount");
}

Status checkAllGatherArguments(const void* send, const void* recv, std::size_t sendcount, DataType dtype, int rank,
                               int size) {
  const std::string at = where("allGather", rank);
  PR_RETURN_IF_ERROR(checkDataType(at, dtype));
  if (sendcount == 0) return Status::ok();
  PR_RETURN_IF_ERROR(checkCountFits(at, "sendcount", sendcount, static_cast<std::size_t>(size), dtype));
  const std::size_t block = sendcount * dataTypeSize(dtype);
  PR_RETURN_IF_ERROR(checkBuffer(at, "send", send, block, sendcount, dtype));
  PR_RETURN_IF_ERROR(checkBuffer(at, "recv", recv, block * static_cast<std::size_t>(size), sendcount, dtype));
  return checkBlockAliasing(at, "recv", recv, "send", send, block, rank, size, "sendcount");
}

Status checkBroadcastArguments(const void* send, const void* recv, std::size_t count, DataType dtype, int root,
                               int rank, int size) {
  const std::string at = where("broadcast", rank);
  PR_RETURN_IF_ERROR(checkDataType(at, dtype));
  if (root < 0 || root >= size) {
    return invalidArgumentError(at + "root " + std::to_string(root) + " is outside 0.." + std::to_string(size - 1) +
                                " for a world of " + std::to_string(size) + "; every rank must pass the same root");
  }
  if (count == 0) return Status::ok();
  PR_RETURN_IF_ERROR(checkCountFits(at, "count", count, 1, dtype));
  const std::size_t bytes = count * dataTypeSize(dtype);
  PR_RETURN_IF_ERROR(checkBuffer(at, "recv", recv, bytes, count, dtype));
  if (rank != root) return Status::ok();  // the send buffer is read on the root only
  PR_RETURN_IF_ERROR(checkBuffer(at, "send", send, bytes, count, dtype));
  return checkIdenticalOrDisjoint(at, send, recv, bytes, "broadcast");
}

}  // namespace peerreduce
