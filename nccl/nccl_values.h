// NCCL's numbers as the dispatch core knows them: result codes, data types, reduction operators and the
// unique id's size of NCCL's C API, without its header (nccl.h needs the CUDA runtime's headers, and the
// core is plain C++ so that the CI machine builds and tests it). They are NCCL's published ABI; the
// exported layer (nccl/exports.cc), which includes the toolkit's nccl.h, checks every one against the
// header with static_asserts, so a header that numbered anything differently fails to compile instead of
// sending a call to the wrong place.
#pragma once

#include <cstddef>

namespace peerreduce::nccl {

// ncclResult_t.
enum class NcclResult : int {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
};
inline constexpr int kNcclResultCount = 8;

inline constexpr int toInt(NcclResult result) { return static_cast<int>(result); }
// ncclSuccess as the int the dispatcher returns.
inline constexpr int kSuccess = toInt(NcclResult::kSuccess);

// ncclDataType_t. Values are ints in every interface: an application may pass any int, which NCCL then
// refuses itself.
enum class NcclDataType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
  kFloat8e4m3 = 10,
  kFloat8e5m2 = 11,
};
inline constexpr int kNcclDataTypeCount = 12;

// ncclRedOp_t's built-in operators; values from kNcclBuiltinOpCount on are operators the application
// created (ncclRedOpCreatePreMulSum), which only the real NCCL knows.
enum class NcclRedOp : int {
  kSum = 0,
  kProd = 1,
  kMax = 2,
  kMin = 3,
  kAvg = 4,
};
inline constexpr int kNcclBuiltinOpCount = 5;

// sizeof(ncclUniqueId): the identifier ranks share to make a communicator.
inline constexpr std::size_t kNcclUniqueIdBytes = 128;

}  // namespace peerreduce::nccl
