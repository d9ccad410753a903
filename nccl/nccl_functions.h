// The functions of NCCL's C API that libpeerreduce_nccl.so exports, as one list: the loader
// resolves them by these names in the real library, the exported layer casts each to its exact type, and
// messages name them. Every one is exported under its NCCL name and with the p prefix (pncclAllReduce), the
// names NCCL's own profiling interface uses. The rest of NCCL 2.28's API is left to the real library, which
// the application's handles belong to (tests/nccl/nccl_2_28_api.txt lists every name and why).
#pragma once

#include <array>
#include <string_view>

namespace peerreduce::nccl {

enum class NcclFunction : int {
  kGetVersion,
  kGetUniqueId,
  kCommInitRank,
  kCommInitRankConfig,
  kCommInitAll,
  kCommSplit,
  kCommFinalize,
  kCommDestroy,
  kCommAbort,
  kCommGetAsyncError,
  kCommCount,
  kCommCuDevice,
  kCommUserRank,
  kGetErrorString,
  kGetLastError,
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kReduce,
  kSend,
  kRecv,
  kGroupStart,
  kGroupEnd,
  kRedOpCreatePreMulSum,
  kRedOpDestroy,
  kMemAlloc,
  kMemFree,
  kCommRegister,
  kCommDeregister,
  kBcast,
  kCommInitRankScalable,
  kCommShrink,
  kCommRevoke,
  kAlltoAll,
  kGather,
  kScatter,
  kGroupSimulateEnd,
  kCommWindowRegister,
  kCommWindowDeregister,
};
inline constexpr int kNcclFunctionCount = static_cast<int>(NcclFunction::kCommWindowDeregister) + 1;

struct NcclFunctionInfo {
  NcclFunction function;
  std::string_view name;  // the exported symbol, "ncclAllReduce"
  // The NCCL release that added it: a real library must have every function of kRequiredSince and
  // before; a later one may be missing from an older NCCL, and calling it then is ncclInvalidUsage naming
  // the function and the release.
  std::string_view since;
  bool required;
};

// 2.12: the oldest NCCL this library loads (ncclRedOpCreatePreMulSum and ncclSend/ncclRecv are older).
inline constexpr std::string_view kRequiredSince = "2.12";

inline constexpr std::array<NcclFunctionInfo, kNcclFunctionCount> kNcclFunctions = {{
    {NcclFunction::kGetVersion, "ncclGetVersion", "2.12", true},
    {NcclFunction::kGetUniqueId, "ncclGetUniqueId", "2.12", true},
    {NcclFunction::kCommInitRank, "ncclCommInitRank", "2.12", true},
    {NcclFunction::kCommInitRankConfig, "ncclCommInitRankConfig", "2.14", false},
    {NcclFunction::kCommInitAll, "ncclCommInitAll", "2.12", true},
    {NcclFunction::kCommSplit, "ncclCommSplit", "2.18", false},
    {NcclFunction::kCommFinalize, "ncclCommFinalize", "2.14", false},
    {NcclFunction::kCommDestroy, "ncclCommDestroy", "2.12", true},
    {NcclFunction::kCommAbort, "ncclCommAbort", "2.12", true},
    {NcclFunction::kCommGetAsyncError, "ncclCommGetAsyncError", "2.12", true},
    {NcclFunction::kCommCount, "ncclCommCount", "2.12", true},
    {NcclFunction::kCommCuDevice, "ncclCommCuDevice", "2.12", true},
    {NcclFunction::kCommUserRank, "ncclCommUserRank", "2.12", true},
    {NcclFunction::kGetErrorString, "ncclGetErrorString", "2.12", true},
    {NcclFunction::kGetLastError, "ncclGetLastError", "2.13", false},
    {NcclFunction::kAllReduce, "ncclAllReduce", "2.12", true},
    {NcclFunction::kReduceScatter, "ncclReduceScatter", "2.12", true},
    {NcclFunction::kAllGather, "ncclAllGather", "2.12", true},
    {NcclFunction::kBroadcast, "ncclBroadcast", "2.12", true},
    {NcclFunction::kReduce, "ncclReduce", "2.12", true},
    {NcclFunction::kSend, "ncclSend", "2.12", true},
    {NcclFunction::kRecv, "ncclRecv", "2.12", true},
    {NcclFunction::kGroupStart, "ncclGroupStart", "2.12", true},
    {NcclFunction::kGroupEnd, "ncclGroupEnd", "2.12", true},
    {NcclFunction::kRedOpCreatePreMulSum, "ncclRedOpCreatePreMulSum", "2.12", true},
    {NcclFunction::kRedOpDestroy, "ncclRedOpDestroy", "2.12", true},
    {NcclFunction::kMemAlloc, "ncclMemAlloc", "2.19", false},
    {NcclFunction::kMemFree, "ncclMemFree", "2.19", false},
    {NcclFunction::kCommRegister, "ncclCommRegister", "2.19", false},
    {NcclFunction::kCommDeregister, "ncclCommDeregister", "2.19", false},
    {NcclFunction::kBcast, "ncclBcast", "2.12", true},
    {NcclFunction::kCommInitRankScalable, "ncclCommInitRankScalable", "2.23", false},
    {NcclFunction::kCommShrink, "ncclCommShrink", "2.27", false},
    {NcclFunction::kCommRevoke, "ncclCommRevoke", "2.28", false},
    {NcclFunction::kAlltoAll, "ncclAlltoAll", "2.28", false},
    {NcclFunction::kGather, "ncclGather", "2.28", false},
    {NcclFunction::kScatter, "ncclScatter", "2.28", false},
    {NcclFunction::kGroupSimulateEnd, "ncclGroupSimulateEnd", "2.22", false},
    // Forwarded untouched (windows are NCCL's): exported so that a program loading this library by path
    // and looking NCCL's functions up in it alone (vLLM's VLLM_NCCL_SO_PATH) finds them.
    {NcclFunction::kCommWindowRegister, "ncclCommWindowRegister", "2.27", false},
    {NcclFunction::kCommWindowDeregister, "ncclCommWindowDeregister", "2.27", false},
}};

constexpr const NcclFunctionInfo& functionInfo(NcclFunction function) {
  return kNcclFunctions[static_cast<std::size_t>(function)];
}

// The table is indexed by the enum: a row out of place would name another function.
constexpr bool functionsInOrder() {
  for (int i = 0; i < kNcclFunctionCount; ++i) {
    if (static_cast<int>(kNcclFunctions[static_cast<std::size_t>(i)].function) != i) return false;
  }
  return true;
}
static_assert(functionsInOrder(), "kNcclFunctions must list the functions in NcclFunction order");

}  // namespace peerreduce::nccl
