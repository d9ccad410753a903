#include "api/argument_checks.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

namespace peerreduce {
namespace {

std::string where(int rank) { return "allreduce on rank " + std::to_string(rank) + ": "; }

std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

}  // namespace

Status checkAllreduceArguments(const void* send, const void* recv, std::size_t count, DataType dtype, ReduceOp op,
                               int rank) {
  if (!isValidDataType(dtype)) {
    return invalidArgumentError(where(rank) + "unknown dtype value " + std::to_string(static_cast<int>(dtype)) +
                                " (valid: 0.." + std::to_string(kDataTypeCount - 1) + ", see peerreduce/types.h)");
  }
  if (!isValidReduceOp(op)) {
    return invalidArgumentError(where(rank) + "unknown op value " + std::to_string(static_cast<int>(op)) +
                                " (valid: 0.." + std::to_string(kReduceOpCount - 1) + ", see peerreduce/types.h)");
  }
  if (count == 0) return Status::ok();
  if (send == nullptr)
    return invalidArgumentError(where(rank) + "send buffer is null with count " + std::to_string(count));
  if (recv == nullptr)
    return invalidArgumentError(where(rank) + "recv buffer is null with count " + std::to_string(count));
  const std::size_t elem = dataTypeSize(dtype);
  if (count > std::numeric_limits<std::size_t>::max() / elem) {
    return invalidArgumentError(where(rank) + "count " + std::to_string(count) + " x " + std::to_string(elem) +
                                "-byte " + std::string(dataTypeName(dtype)) + " overflows the address space");
  }
  const std::size_t bytes = count * elem;
  const auto s = reinterpret_cast<std::uintptr_t>(send);
  const auto r = reinterpret_cast<std::uintptr_t>(recv);
  if (s > std::numeric_limits<std::uintptr_t>::max() - bytes ||
      r > std::numeric_limits<std::uintptr_t>::max() - bytes) {
    return invalidArgumentError(where(rank) + "buffer of " + std::to_string(bytes) + " bytes at " +
                                hex(s > r ? send : recv) + " runs past the end of the address space");
  }
  if (s % elem != 0 || r % elem != 0) {
    return invalidArgumentError(where(rank) + std::string(s % elem ? "send" : "recv") + " buffer " +
                                hex(s % elem ? send : recv) + " is not aligned to its " + std::to_string(elem) +
                                "-byte " + std::string(dataTypeName(dtype)) + " elements");
  }
  if (s != r && s < r + bytes && r < s + bytes) {
    return invalidArgumentError(where(rank) + "send " + hex(send) + " and recv " + hex(recv) + " overlap over " +
                                std::to_string(bytes) +
                                " bytes without being identical; pass the same pointer "
                                "for an in-place allreduce or disjoint buffers");
  }
  return Status::ok();
}

}  // namespace peerreduce
