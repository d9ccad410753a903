// The C API (peerreduce/peerreduce.h): everything that needs only libpeerreduce. The simulator's
// functions (prSimWorld*, prCommInitSim*) are in sim/c_api_sim.cc, prConfig_t's in c_config.cc.
//
// Each function checks its handles and out-pointers, then hands the rest to the C++ API, which
// validates the values (enums included), so that the C and C++ APIs accept and reject the same things
// with the same messages.
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "api/c_api_internal.h"
#include "peerreduce/gpu.h"
#include "peerreduce/types.h"
#include "peerreduce/version.h"

namespace peerreduce::capi {
namespace {

// The C enums are the C++ ones by number; a mismatch would silently change what callers ask for.
static_assert(prCollAllReduce == static_cast<int>(Collective::kAllReduce));
static_assert(prCollReduceScatter == static_cast<int>(Collective::kReduceScatter));
static_assert(prCollAllGather == static_cast<int>(Collective::kAllGather));
static_assert(prCollBroadcast == static_cast<int>(Collective::kBroadcast));
static_assert(prNumCollectives == kCollectiveCount);
static_assert(prSuccess == static_cast<int>(ErrorCode::kOk));
static_assert(prInvalidArgument == static_cast<int>(ErrorCode::kInvalidArgument));
static_assert(prOutOfMemory == static_cast<int>(ErrorCode::kOutOfMemory));
static_assert(prTimeout == static_cast<int>(ErrorCode::kTimeout));
static_assert(prRemoteError == static_cast<int>(ErrorCode::kRemoteError));
static_assert(prPeerLost == static_cast<int>(ErrorCode::kPeerLost));
static_assert(prLinkDown == static_cast<int>(ErrorCode::kLinkDown));
static_assert(prAborted == static_cast<int>(ErrorCode::kAborted));
static_assert(prUnsupported == static_cast<int>(ErrorCode::kUnsupported));
static_assert(prInternalError == static_cast<int>(ErrorCode::kInternal));
static_assert(prUnavailable == static_cast<int>(ErrorCode::kUnavailable));
static_assert(prMismatch == static_cast<int>(ErrorCode::kMismatch));
static_assert(prCorrupt == static_cast<int>(ErrorCode::kCorrupt));
static_assert(prNumResults == static_cast<int>(ErrorCode::kCorrupt) + 1);

static_assert(prInt8 == static_cast<int>(DataType::kInt8));
static_assert(prUint8 == static_cast<int>(DataType::kUint8));
static_assert(prInt32 == static_cast<int>(DataType::kInt32));
static_assert(prUint32 == static_cast<int>(DataType::kUint32));
static_assert(prInt64 == static_cast<int>(DataType::kInt64));
static_assert(prUint64 == static_cast<int>(DataType::kUint64));
static_assert(prFloat16 == static_cast<int>(DataType::kFloat16));
static_assert(prBFloat16 == static_cast<int>(DataType::kBFloat16));
static_assert(prFloat32 == static_cast<int>(DataType::kFloat32));
static_assert(prFloat64 == static_cast<int>(DataType::kFloat64));
static_assert(prFloat8e4m3 == static_cast<int>(DataType::kFloat8E4M3));
static_assert(prFloat8e5m2 == static_cast<int>(DataType::kFloat8E5M2));
static_assert(prNumDataTypes == kDataTypeCount);

static_assert(prSum == static_cast<int>(ReduceOp::kSum));
static_assert(prProd == static_cast<int>(ReduceOp::kProd));
static_assert(prMin == static_cast<int>(ReduceOp::kMin));
static_assert(prMax == static_cast<int>(ReduceOp::kMax));
static_assert(prAvg == static_cast<int>(ReduceOp::kAvg));
static_assert(prNumRedOps == kReduceOpCount);

static_assert(prAlgoAuto == static_cast<int>(Algorithm::kAuto));
static_assert(prAlgoOneShot == static_cast<int>(Algorithm::kOneShot));
static_assert(prAlgoTwoShot == static_cast<int>(Algorithm::kTwoShot));
static_assert(prAlgoRing == static_cast<int>(Algorithm::kRing));
static_assert(prAlgoRecursiveDoubling == static_cast<int>(Algorithm::kRecursiveDoubling));
static_assert(prAlgoRabenseifner == static_cast<int>(Algorithm::kRabenseifner));
static_assert(prAlgoTree == static_cast<int>(Algorithm::kTree));
static_assert(prAlgoCopyEngineTwoShot == static_cast<int>(Algorithm::kCopyEngineTwoShot));
static_assert(prNumAlgorithms == kAlgorithmCount);

// The handle types are only declared in C; the C++ side must be able to hold them in an int-sized enum.
static_assert(sizeof(prResult_t) == sizeof(int) && sizeof(prDataType_t) == sizeof(int) &&
              sizeof(prRedOp_t) == sizeof(int) && sizeof(prAlgorithm_t) == sizeof(int));

// Indexed by prResult_t. Nonzero entries are errorCodeName()'s names; 0 says "success" rather than "ok"
// because that is what a C caller printing a result expects to read.
constexpr const char* kResultNames[prNumResults] = {
    "success", "invalid argument", "out of memory",  "timeout",     "remote error", "peer lost", "link down",
    "aborted", "unsupported",      "internal error", "unavailable", "mismatch",     "corrupt",
};

// The last error of this thread. `last_error_text` points into `last_error` or, when even the message
// could not be allocated, at a static text, so that prGetLastError never fails.
thread_local std::string last_error;
thread_local const char* last_error_text = "";

constexpr const char* kNoMemoryForMessage =
    "peerreduce: an error occurred, but there was not enough host memory to record its message";

prResult_t toCResult(ErrorCode code) { return static_cast<prResult_t>(static_cast<int>(code)); }

}  // namespace

prResult_t recordError(const char* function, ErrorCode code, std::initializer_list<std::string_view> parts) noexcept {
  try {
    std::string message = function;
    message += ": ";
    message += errorCodeName(code);
    message += ": ";
    for (std::string_view part : parts) message += part;
    last_error = std::move(message);
    last_error_text = last_error.c_str();
  } catch (...) {
    last_error_text = kNoMemoryForMessage;
  }
  return toCResult(code);
}

prResult_t recordError(const char* function, const Status& status) noexcept {
  if (status.isOk()) {
    // A caller that reports success as an error is a bug here; never hand a C caller prSuccess with a message.
    return recordError(function, ErrorCode::kInternal, {"an ok status was reported as an error; please report it"});
  }
  return recordError(function, status.code(), {status.message()});
}

}  // namespace peerreduce::capi

using peerreduce::capi::guarded;
using peerreduce::capi::liveComms;
using peerreduce::capi::nullArgument;
using peerreduce::capi::toResult;
using peerreduce::capi::unknownHandle;

namespace {
constexpr const char* kCommHint = "pass a communicator made by prCommInitSimAll or prCommInitSimRank";
}  // namespace

extern "C" {

prResult_t prAllReduce(const void* sendbuff, void* recvbuff, size_t count, prDataType_t datatype, prRedOp_t op,
                       prComm_t comm, void* stream) noexcept {
  constexpr const char* kFunction = "prAllReduce";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    // Unknown enum values go through as they are: the C++ API rejects them with the valid range.
    return toResult(kFunction, comm->comm->allreduce(sendbuff, recvbuff, count,
                                                     static_cast<peerreduce::DataType>(static_cast<int>(datatype)),
                                                     static_cast<peerreduce::ReduceOp>(static_cast<int>(op)), stream));
  });
}

prResult_t prReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, prDataType_t datatype, prRedOp_t op,
                           prComm_t comm, void* stream) noexcept {
  constexpr const char* kFunction = "prReduceScatter";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    return toResult(kFunction,
                    comm->comm->reduceScatter(sendbuff, recvbuff, recvcount,
                                              static_cast<peerreduce::DataType>(static_cast<int>(datatype)),
                                              static_cast<peerreduce::ReduceOp>(static_cast<int>(op)), stream));
  });
}

prResult_t prAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, prDataType_t datatype, prComm_t comm,
                       void* stream) noexcept {
  constexpr const char* kFunction = "prAllGather";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    return toResult(kFunction,
                    comm->comm->allGather(sendbuff, recvbuff, sendcount,
                                          static_cast<peerreduce::DataType>(static_cast<int>(datatype)), stream));
  });
}

prResult_t prBroadcast(const void* sendbuff, void* recvbuff, size_t count, prDataType_t datatype, int root,
                       prComm_t comm, void* stream) noexcept {
  constexpr const char* kFunction = "prBroadcast";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    return toResult(kFunction,
                    comm->comm->broadcast(sendbuff, recvbuff, count,
                                          static_cast<peerreduce::DataType>(static_cast<int>(datatype)), root, stream));
  });
}

prResult_t prAllReduceBatch(const prBatchItem_t* items, size_t nitems, prDataType_t datatype, prRedOp_t op,
                            prComm_t comm, void* stream) noexcept {
  constexpr const char* kFunction = "prAllReduceBatch";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    if (items == nullptr && nitems > 0)
      return nullArgument(kFunction, "items", "pass an array of nitems prBatchItem_t");
    if (nitems > peerreduce::kMaxBatchItems) {
      return toResult(kFunction,
                      peerreduce::invalidArgumentError(std::to_string(nitems) + " items; at most " +
                                                       std::to_string(peerreduce::kMaxBatchItems) + " per call"));
    }
    // Copied into the C++ type on the stack: no allocation on the allreduce path.
    std::array<peerreduce::BatchItem, peerreduce::kMaxBatchItems> copy;
    const std::size_t taken = nitems;
    for (std::size_t i = 0; i < taken; ++i)
      copy[i] = peerreduce::BatchItem{items[i].sendbuff, items[i].recvbuff, items[i].count};
    const std::span<const peerreduce::BatchItem> span(copy.data(), taken);
    return toResult(kFunction,
                    comm->comm->allreduceBatch(span, static_cast<peerreduce::DataType>(static_cast<int>(datatype)),
                                               static_cast<peerreduce::ReduceOp>(static_cast<int>(op)), stream));
  });
}

prResult_t prCommSynchronize(prComm_t comm, void* stream) noexcept {
  constexpr const char* kFunction = "prCommSynchronize";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    return toResult(kFunction, comm->comm->synchronize(stream));
  });
}

prResult_t prCommGetAsyncError(prComm_t comm) noexcept {
  constexpr const char* kFunction = "prCommGetAsyncError";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    return toResult(kFunction, comm->comm->asyncError());
  });
}

prResult_t prCommAbort(prComm_t comm) noexcept {
  constexpr const char* kFunction = "prCommAbort";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    comm->comm->abort();
    return prSuccess;
  });
}

prResult_t prCommDestroy(prComm_t comm) noexcept {
  constexpr const char* kFunction = "prCommDestroy";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    // remove() both checks and retires the handle, so two racing destroys cannot both delete it.
    if (!liveComms().remove(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    delete comm;
    return prSuccess;
  });
}

prResult_t prCommRank(prComm_t comm, int* rank) noexcept {
  constexpr const char* kFunction = "prCommRank";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    if (rank == nullptr) return nullArgument(kFunction, "rank", "pass the address of an int to receive the rank");
    *rank = comm->comm->rank();
    return prSuccess;
  });
}

prResult_t prCommDevice(prComm_t comm, int* device) noexcept {
  constexpr const char* kFunction = "prCommDevice";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    if (device == nullptr) return nullArgument(kFunction, "device", "pass the address of an int to receive the device");
    *device = comm->device;
    return prSuccess;
  });
}

prResult_t prCommMemoryStats(prComm_t comm, prMemoryStats_t* stats) noexcept {
  constexpr const char* kFunction = "prCommMemoryStats";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    if (stats == nullptr) {
      return nullArgument(kFunction, "stats", "pass the address of a prMemoryStats_t to receive the statistics");
    }
    const peerreduce::PoolStats s = comm->comm->memoryStats();
    *stats = prMemoryStats_t{
        s.capacity_bytes,   s.quota_bytes,        s.bytes_in_use, s.peak_bytes_in_use,        s.live_blocks,
        s.allocations,      s.failed_allocations, s.free_blocks,  s.largest_free_block_bytes, s.fragmentation,
        s.defragmentations, s.blocks_moved,       s.bytes_moved};
    return prSuccess;
  });
}

prResult_t prCommSize(prComm_t comm, int* size) noexcept {
  constexpr const char* kFunction = "prCommSize";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    if (size == nullptr) return nullArgument(kFunction, "size", "pass the address of an int to receive the size");
    *size = comm->comm->size();
    return prSuccess;
  });
}

prResult_t prCommEnableProfiling(prComm_t comm, size_t capacity) noexcept {
  constexpr const char* kFunction = "prCommEnableProfiling";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    return toResult(kFunction, comm->comm->enableProfiling(capacity));
  });
}

prResult_t prCommDisableProfiling(prComm_t comm) noexcept {
  constexpr const char* kFunction = "prCommDisableProfiling";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    comm->comm->disableProfiling();
    return prSuccess;
  });
}

prResult_t prCommProfileSummary(prComm_t comm, prProfileSummary_t* summary) noexcept {
  constexpr const char* kFunction = "prCommProfileSummary";
  return guarded(kFunction, [&]() -> prResult_t {
    if (comm == nullptr) return nullArgument(kFunction, "comm", kCommHint);
    if (!liveComms().contains(comm)) return unknownHandle(kFunction, "comm", kCommHint);
    if (summary == nullptr) {
      return nullArgument(kFunction, "summary", "pass the address of a prProfileSummary_t to receive the summary");
    }
    auto s = comm->comm->profileSummary();
    if (!s.isOk()) return toResult(kFunction, s.status());
    *summary = prProfileSummary_t{s->operations, s->timed,     s->dropped, s->bytes,     s->total_us,
                                  s->min_us,     s->median_us, s->max_us,  s->busbw_gbps};
    return prSuccess;
  });
}

prResult_t prGetVersion(int* version) noexcept {
  if (version == nullptr) return nullArgument("prGetVersion", "version", "pass the address of an int");
  *version = PEERREDUCE_VERSION_CODE;
  return prSuccess;
}

prResult_t prGetGpuPlatform(const char** platform) noexcept {
  if (platform == nullptr) {
    return nullArgument("prGetGpuPlatform", "platform", "pass the address of a const char*");
  }
  *platform = peerreduce::gpuPlatformName();
  return prSuccess;
}

const char* prGetErrorString(prResult_t result) noexcept {
  const int value = static_cast<int>(result);
  if (value < 0 || value >= prNumResults) return "unknown result";
  return peerreduce::capi::kResultNames[value];
}

const char* prGetLastError(void) noexcept { return peerreduce::capi::last_error_text; }

}  // extern "C"
