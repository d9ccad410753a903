#include "nccl/loaded_nccl.h"

#include <nccl.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "nccl/library_loader.h"
#include "nccl/nccl_header_version.h"  // refuses an nccl.h older than the API used here
#include "nccl/nccl_settings.h"
#include "nccl/nccl_values.h"

namespace peerreduce::nccl {
namespace {

// The core's copies of NCCL's numbers (nccl_values.h) are the header's.
static_assert(toInt(NcclResult::kSuccess) == ncclSuccess);
static_assert(toInt(NcclResult::kUnhandledCudaError) == ncclUnhandledCudaError);
static_assert(toInt(NcclResult::kSystemError) == ncclSystemError);
static_assert(toInt(NcclResult::kInternalError) == ncclInternalError);
static_assert(toInt(NcclResult::kInvalidArgument) == ncclInvalidArgument);
static_assert(toInt(NcclResult::kInvalidUsage) == ncclInvalidUsage);
static_assert(toInt(NcclResult::kRemoteError) == ncclRemoteError);
static_assert(toInt(NcclResult::kInProgress) == ncclInProgress);
static_assert(kNcclResultCount == ncclNumResults);
static_assert(static_cast<int>(NcclDataType::kInt8) == ncclInt8);
static_assert(static_cast<int>(NcclDataType::kUint8) == ncclUint8);
static_assert(static_cast<int>(NcclDataType::kInt32) == ncclInt32);
static_assert(static_cast<int>(NcclDataType::kUint32) == ncclUint32);
static_assert(static_cast<int>(NcclDataType::kInt64) == ncclInt64);
static_assert(static_cast<int>(NcclDataType::kUint64) == ncclUint64);
static_assert(static_cast<int>(NcclDataType::kFloat16) == ncclFloat16);
static_assert(static_cast<int>(NcclDataType::kFloat32) == ncclFloat32);
static_assert(static_cast<int>(NcclDataType::kFloat64) == ncclFloat64);
static_assert(static_cast<int>(NcclDataType::kBfloat16) == ncclBfloat16);
static_assert(static_cast<int>(NcclDataType::kFloat8e4m3) == ncclFloat8e4m3);
static_assert(static_cast<int>(NcclDataType::kFloat8e5m2) == ncclFloat8e5m2);
static_assert(kNcclDataTypeCount == ncclNumTypes);
static_assert(static_cast<int>(NcclRedOp::kSum) == ncclSum);
static_assert(static_cast<int>(NcclRedOp::kProd) == ncclProd);
static_assert(static_cast<int>(NcclRedOp::kMax) == ncclMax);
static_assert(static_cast<int>(NcclRedOp::kMin) == ncclMin);
static_assert(static_cast<int>(NcclRedOp::kAvg) == ncclAvg);
static_assert(kNcclBuiltinOpCount == ncclNumOps);
static_assert(kNcclUniqueIdBytes == sizeof(ncclUniqueId));
// This library exports NCCL 2.28's API with the header's exact declarations (it still loads an older NCCL,
// whose missing functions are refused by name when called).
static_assert(NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0),
              "libpeerreduce_nccl needs nccl.h of NCCL 2.28 or later: set PEERREDUCE_NCCL_INCLUDE_DIR");

thread_local int t_inside_real = 0;

// A loaded symbol as the exact type of the NCCL function it is (POSIX guarantees the conversion).
template <typename Function>
Function* as(void* symbol) {
  return reinterpret_cast<Function*>(symbol);
}

ncclUniqueId uniqueIdFrom(const void* bytes) {
  ncclUniqueId id;
  std::memcpy(&id, bytes, sizeof(id));
  return id;
}

ncclComm_t commOf(void* comm) { return static_cast<ncclComm_t>(comm); }
ncclDataType_t typeOf(int dtype) { return static_cast<ncclDataType_t>(dtype); }
ncclRedOp_t opOf(int op) { return static_cast<ncclRedOp_t>(op); }
cudaStream_t streamOf(void* stream) { return static_cast<cudaStream_t>(stream); }

class LoadedNccl final : public RealNccl {
 public:
  explicit LoadedNccl(LoadedLibrary library) : library_(std::move(library)) {
    description_ = library_.file;
    int version = 0;
    if (as<decltype(ncclGetVersion)>(at(NcclFunction::kGetVersion))(&version) == ncclSuccess) {
      // NCCL_VERSION's encoding from 2.9 on: major x 10000 + minor x 100 + patch.
      description_ += " (NCCL " + std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
                      std::to_string(version % 100) + ")";
    }
  }

  bool has(NcclFunction function) const override { return at(function) != nullptr; }
  const char* describe() const override { return description_.c_str(); }

  int getVersion(int* version) override {
    const RealCallScope inside_real;
    return as<decltype(ncclGetVersion)>(at(NcclFunction::kGetVersion))(version);
  }
  int getUniqueId(void* unique_id) override {
    const RealCallScope inside_real;
    // NULL goes through, for the real library to refuse.
    ncclUniqueId id{};
    const ncclResult_t result =
        as<decltype(ncclGetUniqueId)>(at(NcclFunction::kGetUniqueId))(unique_id != nullptr ? &id : nullptr);
    if (unique_id != nullptr) std::memcpy(unique_id, &id, sizeof(id));
    return result;
  }
  int commInitRank(void** comm, int nranks, const void* unique_id, int rank) override {
    const RealCallScope inside_real;
    ncclComm_t made = nullptr;
    const ncclResult_t result =
        as<decltype(ncclCommInitRank)>(at(NcclFunction::kCommInitRank))(&made, nranks, uniqueIdFrom(unique_id), rank);
    *comm = made;
    return result;
  }
  int commInitRankConfig(void** comm, int nranks, const void* unique_id, int rank, void* config) override {
    const RealCallScope inside_real;
    ncclComm_t made = nullptr;
    const ncclResult_t result = as<decltype(ncclCommInitRankConfig)>(at(NcclFunction::kCommInitRankConfig))(
        &made, nranks, uniqueIdFrom(unique_id), rank, static_cast<ncclConfig_t*>(config));
    *comm = made;
    return result;
  }
  int commInitAll(void** comms, int ndev, const int* devlist) override {
    const RealCallScope inside_real;
    if (ndev <= 0) {
      return as<decltype(ncclCommInitAll)>(at(NcclFunction::kCommInitAll))(nullptr, ndev, devlist);
    }
    std::vector<ncclComm_t> made(static_cast<std::size_t>(ndev), nullptr);
    const ncclResult_t result =
        as<decltype(ncclCommInitAll)>(at(NcclFunction::kCommInitAll))(made.data(), ndev, devlist);
    for (std::size_t i = 0; i < made.size(); ++i) comms[i] = made[i];
    return result;
  }
  int commSplit(void* comm, int color, int key, void** newcomm, void* config) override {
    const RealCallScope inside_real;
    ncclComm_t made = nullptr;
    const ncclResult_t result = as<decltype(ncclCommSplit)>(at(NcclFunction::kCommSplit))(
        commOf(comm), color, key, &made, static_cast<ncclConfig_t*>(config));
    *newcomm = made;
    return result;
  }
  int commFinalize(void* comm) override {
    const RealCallScope inside_real;
    return as<decltype(ncclCommFinalize)>(at(NcclFunction::kCommFinalize))(commOf(comm));
  }
  int commDestroy(void* comm) override {
    const RealCallScope inside_real;
    return as<decltype(ncclCommDestroy)>(at(NcclFunction::kCommDestroy))(commOf(comm));
  }
  int commAbort(void* comm) override {
    const RealCallScope inside_real;
    return as<decltype(ncclCommAbort)>(at(NcclFunction::kCommAbort))(commOf(comm));
  }
  int commGetAsyncError(void* comm, int* async_error) override {
    const RealCallScope inside_real;
    ncclResult_t state = ncclSuccess;
    const ncclResult_t result =
        as<decltype(ncclCommGetAsyncError)>(at(NcclFunction::kCommGetAsyncError))(commOf(comm), &state);
    *async_error = state;
    return result;
  }
  int commCount(void* comm, int* count) override {
    const RealCallScope inside_real;
    return as<decltype(ncclCommCount)>(at(NcclFunction::kCommCount))(commOf(comm), count);
  }
  int commCuDevice(void* comm, int* device) override {
    const RealCallScope inside_real;
    return as<decltype(ncclCommCuDevice)>(at(NcclFunction::kCommCuDevice))(commOf(comm), device);
  }
  int commUserRank(void* comm, int* rank) override {
    const RealCallScope inside_real;
    return as<decltype(ncclCommUserRank)>(at(NcclFunction::kCommUserRank))(commOf(comm), rank);
  }
  const char* getErrorString(int result) override {
    const RealCallScope inside_real;
    return as<decltype(ncclGetErrorString)>(at(NcclFunction::kGetErrorString))(static_cast<ncclResult_t>(result));
  }
  const char* getLastError(void* comm) override {
    const RealCallScope inside_real;
    return as<decltype(ncclGetLastError)>(at(NcclFunction::kGetLastError))(commOf(comm));
  }
  int allReduce(const void* send, void* recv, std::size_t count, int dtype, int op, void* comm, void* stream) override {
    const RealCallScope inside_real;
    return as<decltype(ncclAllReduce)>(at(NcclFunction::kAllReduce))(send, recv, count, typeOf(dtype), opOf(op),
                                                                     commOf(comm), streamOf(stream));
  }
  int reduceScatter(const void* send, void* recv, std::size_t recvcount, int dtype, int op, void* comm,
                    void* stream) override {
    const RealCallScope inside_real;
    return as<decltype(ncclReduceScatter)>(at(NcclFunction::kReduceScatter))(send, recv, recvcount, typeOf(dtype),
                                                                             opOf(op), commOf(comm), streamOf(stream));
  }
  int allGather(const void* send, void* recv, std::size_t sendcount, int dtype, void* comm, void* stream) override {
    const RealCallScope inside_real;
    return as<decltype(ncclAllGather)>(at(NcclFunction::kAllGather))(send, recv, sendcount, typeOf(dtype), commOf(comm),
                                                                     streamOf(stream));
  }
  int broadcast(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm,
                void* stream) override {
    const RealCallScope inside_real;
    return as<decltype(ncclBroadcast)>(at(NcclFunction::kBroadcast))(send, recv, count, typeOf(dtype), root,
                                                                     commOf(comm), streamOf(stream));
  }
  int reduce(const void* send, void* recv, std::size_t count, int dtype, int op, int root, void* comm,
             void* stream) override {
    const RealCallScope inside_real;
    return as<decltype(ncclReduce)>(at(NcclFunction::kReduce))(send, recv, count, typeOf(dtype), opOf(op), root,
                                                               commOf(comm), streamOf(stream));
  }
  int send(const void* send, std::size_t count, int dtype, int peer, void* comm, void* stream) override {
    const RealCallScope inside_real;
    return as<decltype(ncclSend)>(at(NcclFunction::kSend))(send, count, typeOf(dtype), peer, commOf(comm),
                                                           streamOf(stream));
  }
  int recv(void* recv, std::size_t count, int dtype, int peer, void* comm, void* stream) override {
    const RealCallScope inside_real;
    return as<decltype(ncclRecv)>(at(NcclFunction::kRecv))(recv, count, typeOf(dtype), peer, commOf(comm),
                                                           streamOf(stream));
  }
  int groupStart() override {
    const RealCallScope inside_real;
    return as<decltype(ncclGroupStart)>(at(NcclFunction::kGroupStart))();
  }
  int groupEnd() override {
    const RealCallScope inside_real;
    return as<decltype(ncclGroupEnd)>(at(NcclFunction::kGroupEnd))();
  }
  int redOpCreatePreMulSum(int* op, void* scalar, int dtype, int residence, void* comm) override {
    const RealCallScope inside_real;
    ncclRedOp_t made = ncclSum;
    const ncclResult_t result = as<decltype(ncclRedOpCreatePreMulSum)>(at(NcclFunction::kRedOpCreatePreMulSum))(
        op != nullptr ? &made : nullptr, scalar, typeOf(dtype), static_cast<ncclScalarResidence_t>(residence),
        commOf(comm));
    if (op != nullptr) *op = made;
    return result;
  }
  int redOpDestroy(int op, void* comm) override {
    const RealCallScope inside_real;
    return as<decltype(ncclRedOpDestroy)>(at(NcclFunction::kRedOpDestroy))(opOf(op), commOf(comm));
  }
  int memAlloc(void** ptr, std::size_t size) override {
    const RealCallScope inside_real;
    return as<decltype(ncclMemAlloc)>(at(NcclFunction::kMemAlloc))(ptr, size);
  }
  int memFree(void* ptr) override {
    const RealCallScope inside_real;
    return as<decltype(ncclMemFree)>(at(NcclFunction::kMemFree))(ptr);
  }
  int commRegister(void* comm, void* buffer, std::size_t size, void** handle) override {
    const RealCallScope inside_real;
    return as<decltype(ncclCommRegister)>(at(NcclFunction::kCommRegister))(commOf(comm), buffer, size, handle);
  }
  int commDeregister(void* comm, void* handle) override {
    const RealCallScope inside_real;
    return as<decltype(ncclCommDeregister)>(at(NcclFunction::kCommDeregister))(commOf(comm), handle);
  }
  int bcast(void* buffer, std::size_t count, int dtype, int root, void* comm, void* stream) override {
    const RealCallScope inside_real;
    return as<decltype(ncclBcast)>(at(NcclFunction::kBcast))(buffer, count, typeOf(dtype), root, commOf(comm),
                                                             streamOf(stream));
  }
  int commInitRankScalable(void** comm, int nranks, int rank, int nids, void* unique_ids, void* config) override {
    const RealCallScope inside_real;
    ncclComm_t made = nullptr;
    const ncclResult_t result = as<decltype(ncclCommInitRankScalable)>(at(NcclFunction::kCommInitRankScalable))(
        &made, nranks, rank, nids, static_cast<ncclUniqueId*>(unique_ids), static_cast<ncclConfig_t*>(config));
    *comm = made;
    return result;
  }
  int commShrink(void* comm, int* exclude_ranks, int exclude_count, void** newcomm, void* config, int flags) override {
    const RealCallScope inside_real;
    ncclComm_t made = nullptr;
    const ncclResult_t result = as<decltype(ncclCommShrink)>(at(NcclFunction::kCommShrink))(
        commOf(comm), exclude_ranks, exclude_count, &made, static_cast<ncclConfig_t*>(config), flags);
    *newcomm = made;
    return result;
  }
  int commRevoke(void* comm, int flags) override {
    const RealCallScope inside_real;
    return as<decltype(ncclCommRevoke)>(at(NcclFunction::kCommRevoke))(commOf(comm), flags);
  }
  int alltoAll(const void* send, void* recv, std::size_t count, int dtype, void* comm, void* stream) override {
    const RealCallScope inside_real;
    return as<decltype(ncclAlltoAll)>(at(NcclFunction::kAlltoAll))(send, recv, count, typeOf(dtype), commOf(comm),
                                                                   streamOf(stream));
  }
  int gather(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm, void* stream) override {
    const RealCallScope inside_real;
    return as<decltype(ncclGather)>(at(NcclFunction::kGather))(send, recv, count, typeOf(dtype), root, commOf(comm),
                                                               streamOf(stream));
  }
  int scatter(const void* send, void* recv, std::size_t count, int dtype, int root, void* comm, void* stream) override {
    const RealCallScope inside_real;
    return as<decltype(ncclScatter)>(at(NcclFunction::kScatter))(send, recv, count, typeOf(dtype), root, commOf(comm),
                                                                 streamOf(stream));
  }
  int groupSimulateEnd(void* sim_info) override {
    const RealCallScope inside_real;
    return as<decltype(ncclGroupSimulateEnd)>(at(NcclFunction::kGroupSimulateEnd))(
        static_cast<ncclSimInfo_t*>(sim_info));
  }
  int commWindowRegister(void* comm, void* buffer, std::size_t size, void* window_out, int flags) override {
    const RealCallScope inside_real;
    return as<decltype(ncclCommWindowRegister)>(at(NcclFunction::kCommWindowRegister))(
        commOf(comm), buffer, size, static_cast<ncclWindow_t*>(window_out), flags);
  }
  int commWindowDeregister(void* comm, void* window) override {
    const RealCallScope inside_real;
    return as<decltype(ncclCommWindowDeregister)>(at(NcclFunction::kCommWindowDeregister))(
        commOf(comm), static_cast<ncclWindow_t>(window));
  }

 private:
  void* at(NcclFunction function) const { return library_.symbols[static_cast<std::size_t>(function)]; }

 public:
  void* symbol(NcclFunction function) const { return at(function); }

  LoadedLibrary library_;
  std::string description_;
};

// An address inside this library, to tell the real NCCL from a copy of ourselves.
void ownAddress() {}

}  // namespace

namespace {

// Set once the library is loaded, read by loadedRealSymbol without loading it.
std::atomic<const LoadedNccl*> g_loaded{nullptr};

}  // namespace

StatusOr<RealNccl*> loadedRealNccl() {
  static const StatusOr<RealNccl*> loaded = []() -> StatusOr<RealNccl*> {
    PR_ASSIGN_OR_RETURN(const LibraryChoice choice, readLibraryChoice());
    PR_ASSIGN_OR_RETURN(LoadedLibrary library,
                        loadNcclLibrary(choice.path, choice.from_setting, reinterpret_cast<const void*>(&ownAddress)));
    // Never deleted: see the header.
    auto* made = new LoadedNccl(std::move(library));
    g_loaded.store(made, std::memory_order_release);
    return static_cast<RealNccl*>(made);
  }();
  return loaded;
}

RealCallScope::RealCallScope() { ++t_inside_real; }
RealCallScope::~RealCallScope() { --t_inside_real; }
bool insideRealCall() { return t_inside_real > 0; }

void* loadedRealSymbol(NcclFunction function) {
  const LoadedNccl* loaded = g_loaded.load(std::memory_order_acquire);
  return loaded == nullptr ? nullptr : loaded->symbol(function);
}

}  // namespace peerreduce::nccl
