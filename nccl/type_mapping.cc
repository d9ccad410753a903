#include "nccl/type_mapping.h"

#include <cstdio>

namespace peerreduce::nccl {

std::optional<DataType> peerreduceDataType(int nccl_dtype) {
  switch (static_cast<NcclDataType>(nccl_dtype)) {
    case NcclDataType::kInt8:
      return DataType::kInt8;
    case NcclDataType::kUint8:
      return DataType::kUint8;
    case NcclDataType::kInt32:
      return DataType::kInt32;
    case NcclDataType::kUint32:
      return DataType::kUint32;
    case NcclDataType::kInt64:
      return DataType::kInt64;
    case NcclDataType::kUint64:
      return DataType::kUint64;
    case NcclDataType::kFloat16:
      return DataType::kFloat16;
    case NcclDataType::kFloat32:
      return DataType::kFloat32;
    case NcclDataType::kFloat64:
      return DataType::kFloat64;
    case NcclDataType::kBfloat16:
      return DataType::kBFloat16;
    case NcclDataType::kFloat8e4m3:
      return DataType::kFloat8E4M3;
    case NcclDataType::kFloat8e5m2:
      return DataType::kFloat8E5M2;
  }
  return std::nullopt;
}

std::size_t ncclDataTypeBytes(int nccl_dtype) {
  if (auto type = peerreduceDataType(nccl_dtype)) return dataTypeSize(*type);
  return 0;
}

const char* ncclDataTypeName(int nccl_dtype) {
  // The names are string literals, so their views end in a NUL.
  if (auto type = peerreduceDataType(nccl_dtype)) return dataTypeName(*type).data();
  return "unknown";
}

std::optional<ReduceOp> peerreduceReduceOp(int nccl_op) {
  switch (static_cast<NcclRedOp>(nccl_op)) {
    case NcclRedOp::kSum:
      return ReduceOp::kSum;
    case NcclRedOp::kProd:
      return ReduceOp::kProd;
    case NcclRedOp::kMax:
      return ReduceOp::kMax;
    case NcclRedOp::kMin:
      return ReduceOp::kMin;
    case NcclRedOp::kAvg:
      return ReduceOp::kAvg;  // NCCL's average (peerreduce.h): taken only where the take policy allows
  }
  return std::nullopt;
}

const char* ncclRedOpName(int nccl_op) {
  if (nccl_op == static_cast<int>(NcclRedOp::kAvg)) return "avg";
  if (auto op = peerreduceReduceOp(nccl_op)) return reduceOpName(*op).data();
  // 40 bytes: the words and any int.
  thread_local char text[40];
  std::snprintf(text, sizeof(text), "%s %d", nccl_op >= kNcclBuiltinOpCount ? "created operator" : "unknown operator",
                nccl_op);
  return text;
}

prDataType_t toPrDataType(int nccl_dtype) {
  const auto type = peerreduceDataType(nccl_dtype);
  return static_cast<prDataType_t>(type ? static_cast<int>(*type) : static_cast<int>(prNumDataTypes));
}

prRedOp_t toPrRedOp(int nccl_op) {
  const auto op = peerreduceReduceOp(nccl_op);
  return static_cast<prRedOp_t>(op ? static_cast<int>(*op) : static_cast<int>(prNumRedOps));
}

Status cApiFailure(prResult_t result) {
  // The C API's results are ErrorCode's numbers (static_asserts in lib/api/c_api.cc).
  return Status(static_cast<ErrorCode>(static_cast<int>(result)), prGetLastError());
}

NcclResult ncclResultFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return NcclResult::kSuccess;
    case ErrorCode::kInvalidArgument:
      return NcclResult::kInvalidArgument;
    case ErrorCode::kAborted:
    case ErrorCode::kUnsupported:
    case ErrorCode::kMismatch:
      return NcclResult::kInvalidUsage;
    case ErrorCode::kTimeout:
    case ErrorCode::kRemoteError:
    case ErrorCode::kPeerLost:
    case ErrorCode::kLinkDown:
    case ErrorCode::kCorrupt:
      return NcclResult::kRemoteError;
    case ErrorCode::kOutOfMemory:
    case ErrorCode::kUnavailable:
      return NcclResult::kSystemError;
    case ErrorCode::kInternal:
      return NcclResult::kInternalError;
  }
  return NcclResult::kInternalError;
}

}  // namespace peerreduce::nccl
