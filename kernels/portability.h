// The portability header: the one place that knows which GPU platform the code is built for.
//
// All GPU code in peerreduce is written against HIP names. This header maps them:
// - PEERREDUCE_GPU_HIP (AMD, built with hipcc or with the HIP headers): the real <hip/hip_runtime.h>;
// - PEERREDUCE_GPU_CUDA (NVIDIA, CUDA 13): a small mapping of exactly the HIP names peerreduce uses
//   onto the CUDA runtime (Debian's HIP headers for NVIDIA do not compile with CUDA 13);
// - neither: only the qualifiers, so the reduce arithmetic that kernels share with the simulator
//   compiles as ordinary host code.
// It also provides the few device primitives the kernels need with the same meaning on both
// platforms: system-scope release/acquire atomics on 64-bit counters, a nanosecond timer for
// deadlines, and a short sleep for polling loops.
//
// Nothing else in the project may test the platform with #if; it includes this header instead.
#pragma once

#include <cstdint>

// Programmatic dependent launch needs the grid-dependency wait in the code that runs (awaitPriorGrid
// below), which exists from compute_90 PTX (Hopper) on: host code compares kernelPtxVersion with it.
inline constexpr int kGridDependencyPtxVersion = 90;

#if defined(PEERREDUCE_GPU_HIP)
#include <hip/hip_runtime.h>
#define PR_GPU_PLATFORM_NAME "hip"
#define PR_HOST_DEVICE __host__ __device__
#define PR_DEVICE __device__
#define PR_GLOBAL __global__
#define PR_INLINE __forceinline__
#define PR_GRID_CONSTANT  // kernel arguments live in memory the kernel reads in place
// Whether `stream` is the device's default stream, which every thread of the process shares.
inline bool isSharedDefaultStream(hipStream_t stream) { return stream == nullptr; }
// Whether the host cannot address `ptr` directly (device memory): host-staged paths copy it. Any error
// (no device, no driver, memory the runtime does not know) means host memory.
// ROCm 6 names the pointer's memory type `type`; earlier HIP (Debian's among them) `memoryType`.
template <typename Attributes>
auto pointerMemoryType(const Attributes& attributes, int) -> decltype(attributes.type) {
  return attributes.type;
}
template <typename Attributes>
auto pointerMemoryType(const Attributes& attributes, long) -> decltype(attributes.memoryType) {
  return attributes.memoryType;
}
inline bool isDeviceMemory(const void* ptr) {
  hipPointerAttribute_t attributes{};
  if (hipPointerGetAttributes(&attributes, ptr) != hipSuccess) {
    (void)hipGetLastError();
    return false;
  }
  return pointerMemoryType(attributes, 0) == hipMemoryTypeDevice;
}
// The device whose memory `ptr` is, or -1 for memory the host addresses (as isDeviceMemory decides).
inline int deviceOfMemory(const void* ptr) {
  hipPointerAttribute_t attributes{};
  if (hipPointerGetAttributes(&attributes, ptr) != hipSuccess) {
    (void)hipGetLastError();
    return -1;
  }
  return pointerMemoryType(attributes, 0) == hipMemoryTypeDevice ? attributes.device : -1;
}
#elif defined(PEERREDUCE_GPU_CUDA)
#include <cuda.h>  // driver API types only: its one function is found at run time (hipMemGetAddressRange)
#include <cuda_runtime.h>
#define PR_GPU_PLATFORM_NAME "cuda"
#define PR_HOST_DEVICE __host__ __device__
#define PR_DEVICE __device__
#define PR_GLOBAL __global__
#define PR_INLINE __forceinline__
// A kernel parameter read in place (indexed, or its address taken) instead of copied per thread.
#define PR_GRID_CONSTANT __grid_constant__

// ---- HIP runtime names used by peerreduce, on CUDA ----
using hipError_t = cudaError_t;
using hipStream_t = cudaStream_t;
using hipEvent_t = cudaEvent_t;
using hipGraph_t = cudaGraph_t;
using hipGraphExec_t = cudaGraphExec_t;
using hipIpcMemHandle_t = cudaIpcMemHandle_t;
using hipStreamCaptureStatus = cudaStreamCaptureStatus;
inline constexpr hipError_t hipSuccess = cudaSuccess;
inline constexpr hipError_t hipErrorNotReady = cudaErrorNotReady;
inline constexpr hipError_t hipErrorInvalidValue = cudaErrorInvalidValue;
inline constexpr hipError_t hipErrorPeerAccessAlreadyEnabled = cudaErrorPeerAccessAlreadyEnabled;
inline constexpr hipError_t hipErrorPeerAccessUnsupported = cudaErrorPeerAccessUnsupported;
inline constexpr cudaMemcpyKind hipMemcpyHostToDevice = cudaMemcpyHostToDevice;
inline constexpr cudaMemcpyKind hipMemcpyDeviceToHost = cudaMemcpyDeviceToHost;
inline constexpr cudaMemcpyKind hipMemcpyDeviceToDevice = cudaMemcpyDeviceToDevice;
inline constexpr cudaMemcpyKind hipMemcpyDefault = cudaMemcpyDefault;
inline constexpr unsigned hipStreamNonBlocking = cudaStreamNonBlocking;
inline constexpr unsigned hipEventDisableTiming = cudaEventDisableTiming;
inline constexpr unsigned hipIpcMemLazyEnablePeerAccess = cudaIpcMemLazyEnablePeerAccess;
inline constexpr unsigned hipHostMallocMapped = cudaHostAllocMapped;
inline constexpr unsigned hipHostMallocPortable = cudaHostAllocPortable;
inline constexpr unsigned hipHostRegisterMapped = cudaHostRegisterMapped;
inline constexpr unsigned hipHostRegisterPortable = cudaHostRegisterPortable;
inline constexpr cudaStreamCaptureMode hipStreamCaptureModeThreadLocal = cudaStreamCaptureModeThreadLocal;
inline constexpr cudaStreamCaptureStatus hipStreamCaptureStatusNone = cudaStreamCaptureStatusNone;
inline constexpr cudaDeviceAttr hipDeviceAttributeMultiprocessorCount = cudaDevAttrMultiProcessorCount;
inline constexpr cudaDeviceAttr hipDeviceAttributePciBusId = cudaDevAttrPciBusId;
inline constexpr cudaDeviceAttr hipDeviceAttributeComputeCapabilityMajor = cudaDevAttrComputeCapabilityMajor;
inline constexpr cudaDeviceAttr hipDeviceAttributeComputeCapabilityMinor = cudaDevAttrComputeCapabilityMinor;

inline hipError_t hipGetDeviceCount(int* count) { return cudaGetDeviceCount(count); }
inline hipError_t hipSetDevice(int device) { return cudaSetDevice(device); }
inline hipError_t hipGetDevice(int* device) { return cudaGetDevice(device); }
inline hipError_t hipDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  return cudaDeviceGetAttribute(value, attr, device);
}
inline hipError_t hipDeviceCanAccessPeer(int* can, int device, int peer) {
  return cudaDeviceCanAccessPeer(can, device, peer);
}
inline hipError_t hipDeviceEnablePeerAccess(int peer, unsigned flags) {
  return cudaDeviceEnablePeerAccess(peer, flags);
}
inline hipError_t hipDeviceSynchronize() { return cudaDeviceSynchronize(); }
inline hipError_t hipGetLastError() { return cudaGetLastError(); }
inline hipError_t hipPeekAtLastError() { return cudaPeekAtLastError(); }
inline const char* hipGetErrorString(hipError_t error) { return cudaGetErrorString(error); }
inline const char* hipGetErrorName(hipError_t error) { return cudaGetErrorName(error); }
inline hipError_t hipMalloc(void** ptr, std::size_t bytes) { return cudaMalloc(ptr, bytes); }
inline hipError_t hipFree(void* ptr) { return cudaFree(ptr); }
inline hipError_t hipHostMalloc(void** ptr, std::size_t bytes, unsigned flags) {
  return cudaHostAlloc(ptr, bytes, flags);
}
inline hipError_t hipHostFree(void* ptr) { return cudaFreeHost(ptr); }
inline hipError_t hipHostRegister(void* ptr, std::size_t bytes, unsigned flags) {
  return cudaHostRegister(ptr, bytes, flags);
}
inline hipError_t hipHostUnregister(void* ptr) { return cudaHostUnregister(ptr); }
inline hipError_t hipHostGetDevicePointer(void** device, void* host, unsigned flags) {
  return cudaHostGetDevicePointer(device, host, flags);
}
inline hipError_t hipMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  return cudaMemcpy(dst, src, bytes, kind);
}
inline hipError_t hipMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, hipStream_t s) {
  return cudaMemcpyAsync(dst, src, bytes, kind, s);
}
inline hipError_t hipMemset(void* dst, int value, std::size_t bytes) { return cudaMemset(dst, value, bytes); }
inline hipError_t hipMemsetAsync(void* dst, int value, std::size_t bytes, hipStream_t s) {
  return cudaMemsetAsync(dst, value, bytes, s);
}
inline hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned flags) {
  return cudaStreamCreateWithFlags(s, flags);
}
inline hipError_t hipStreamDestroy(hipStream_t s) { return cudaStreamDestroy(s); }
inline hipError_t hipStreamSynchronize(hipStream_t s) { return cudaStreamSynchronize(s); }
inline hipError_t hipStreamQuery(hipStream_t s) { return cudaStreamQuery(s); }
inline hipError_t hipStreamIsCapturing(hipStream_t s, hipStreamCaptureStatus* status) {
  return cudaStreamIsCapturing(s, status);
}
inline hipError_t hipStreamGetCaptureInfo(hipStream_t s, hipStreamCaptureStatus* status, unsigned long long* id) {
  return cudaStreamGetCaptureInfo(s, status, id);
}
inline hipError_t hipStreamBeginCapture(hipStream_t s, cudaStreamCaptureMode mode) {
  return cudaStreamBeginCapture(s, mode);
}
inline hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t* graph) { return cudaStreamEndCapture(s, graph); }
inline hipError_t hipGraphInstantiate(hipGraphExec_t* exec, hipGraph_t graph, void* /*error_node*/, char* /*log*/,
                                      std::size_t /*log_size*/) {
  return cudaGraphInstantiate(exec, graph, 0);
}
inline hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t s) { return cudaGraphLaunch(exec, s); }
inline hipError_t hipGraphExecDestroy(hipGraphExec_t exec) { return cudaGraphExecDestroy(exec); }
inline hipError_t hipGraphDestroy(hipGraph_t graph) { return cudaGraphDestroy(graph); }
inline hipError_t hipEventCreate(hipEvent_t* e) { return cudaEventCreate(e); }
inline hipError_t hipEventDestroy(hipEvent_t e) { return cudaEventDestroy(e); }
inline hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned flags) { return cudaEventCreateWithFlags(e, flags); }
inline hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned flags) {
  return cudaStreamWaitEvent(s, e, flags);
}
inline hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { return cudaEventRecord(e, s); }
inline hipError_t hipEventSynchronize(hipEvent_t e) { return cudaEventSynchronize(e); }
inline hipError_t hipEventQuery(hipEvent_t e) { return cudaEventQuery(e); }
inline hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop) {
  return cudaEventElapsedTime(ms, start, stop);
}
inline hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t* handle, void* ptr) { return cudaIpcGetMemHandle(handle, ptr); }
inline hipError_t hipIpcOpenMemHandle(void** ptr, hipIpcMemHandle_t handle, unsigned flags) {
  return cudaIpcOpenMemHandle(ptr, handle, flags);
}
inline hipError_t hipIpcCloseMemHandle(void* ptr) { return cudaIpcCloseMemHandle(ptr); }
// The allocation containing `ptr`: the CUDA runtime has no equivalent, the driver does. The driver
// function is found through the runtime's entry-point query rather than linked, so binaries do not need
// libcuda.so to start (the runtime loads the driver when a GPU is first used); without a driver the
// query fails and so does this call, with the runtime's error.
inline hipError_t hipMemGetAddressRange(void** base, std::size_t* size, void* ptr) {
  using AddressRange = CUresult (*)(CUdeviceptr*, std::size_t*, CUdeviceptr);
  // 12000: the ABI of CUDA 12.0 (cuMemGetAddressRange_v2), unchanged since.
  static const AddressRange query = []() -> AddressRange {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &function, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return nullptr;
    }
    return reinterpret_cast<AddressRange>(function);
  }();
  if (query == nullptr) return cudaErrorSymbolNotFound;
  CUdeviceptr b = 0;
  std::size_t s = 0;
  if (query(&b, &s, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) return cudaErrorInvalidValue;
  *base = reinterpret_cast<void*>(b);
  *size = s;
  return cudaSuccess;
}
// Whether `stream` is the device's default stream, which every thread of the process shares (the null
// stream and its explicit legacy handle; the per-thread default stream is a thread's own).
inline bool isSharedDefaultStream(hipStream_t stream) { return stream == nullptr || stream == cudaStreamLegacy; }
// Whether the host cannot address `ptr` directly (device memory): host-staged paths copy it. Any error
// (no device, no driver) means host memory.
inline bool isDeviceMemory(const void* ptr) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice;
}
// The device whose memory `ptr` is, or -1 for memory the host addresses (as isDeviceMemory decides).
inline int deviceOfMemory(const void* ptr) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return attributes.type == cudaMemoryTypeDevice ? attributes.device : -1;
}
inline hipError_t hipDeviceGetPCIBusId(char* id, int length, int device) {
  return cudaDeviceGetPCIBusId(id, length, device);
}
#else
#define PR_GPU_PLATFORM_NAME "none"
#define PR_HOST_DEVICE
#define PR_DEVICE
#define PR_GLOBAL
#define PR_INLINE inline
#define PR_GRID_CONSTANT
#endif

// ---- Device primitives with one meaning on both platforms (device code only) ----
#if defined(__HIPCC__) || defined(__CUDACC__)
namespace peerreduce::gpu {

// Increments a 64-bit counter that another GPU (or the host) reads: release at system scope, so every
// write this thread made before is visible to whoever acquires the new value.
PR_DEVICE PR_INLINE void atomicAddReleaseSystem(std::uint64_t* counter, std::uint64_t value) {
#if defined(__HIPCC__)
  __hip_atomic_fetch_add(counter, value, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
#else
  asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(counter), "l"(value) : "memory");
#endif
}

// Reads a 64-bit counter with acquire at system scope: writes released before the value are visible.
PR_DEVICE PR_INLINE std::uint64_t loadAcquireSystem(const std::uint64_t* counter) {
#if defined(__HIPCC__)
  return __hip_atomic_load(counter, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
#else
  std::uint64_t value;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(counter) : "memory");
  return value;
#endif
}

// Increments a counter without ordering: for signals that follow a fence already issued.
PR_DEVICE PR_INLINE void atomicAddRelaxedSystem(std::uint64_t* counter, std::uint64_t value) {
#if defined(__HIPCC__)
  __hip_atomic_fetch_add(counter, value, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
#else
  asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(counter), "l"(value) : "memory");
#endif
}

// A release fence at system scope: every write before it is visible to whoever later acquires
// a value written after it.
PR_DEVICE PR_INLINE void fenceReleaseSystem() {
#if defined(__HIPCC__)
  __atomic_thread_fence(__ATOMIC_RELEASE);
#else
  asm volatile("fence.acq_rel.sys;" ::: "memory");
#endif
}

// 16-byte load that bypasses the SM's L1 (cached in L2 only): data written by peers during this kernel
// must never be served from a stale L1 line.
struct alignas(16) Bytes16 {
  std::uint32_t words[4];
};
PR_DEVICE PR_INLINE Bytes16 loadStreaming16(const void* address) {
#if defined(__HIPCC__)
  Bytes16 out;
  const auto* p = reinterpret_cast<const std::uint32_t*>(address);
#pragma unroll
  for (int i = 0; i < 4; ++i) out.words[i] = __builtin_nontemporal_load(p + i);
  return out;
#else
  const uint4 v = __ldcg(reinterpret_cast<const uint4*>(address));
  return Bytes16{{v.x, v.y, v.z, v.w}};
#endif
}

// Low-latency lines: 16 bytes written and read as one access, in which each 8-byte half (4 bytes of
// data, 4 bytes of flag) is single-copy atomic, so a reader that sees the flag of a half sees its data.
// Volatile: never cached in L1, never merged or split by the compiler.
PR_DEVICE PR_INLINE void storeLine16(void* address, const Bytes16& line) {
#if defined(__HIPCC__)
  auto* p = reinterpret_cast<std::uint64_t*>(address);
  const std::uint64_t lo = (static_cast<std::uint64_t>(line.words[1]) << 32) | line.words[0];
  const std::uint64_t hi = (static_cast<std::uint64_t>(line.words[3]) << 32) | line.words[2];
  __hip_atomic_store(p, lo, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  __hip_atomic_store(p + 1, hi, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
#else
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(address), "r"(line.words[0]),
               "r"(line.words[1]), "r"(line.words[2]), "r"(line.words[3])
               : "memory");
#endif
}
PR_DEVICE PR_INLINE Bytes16 loadLine16(const void* address) {
  Bytes16 out;
#if defined(__HIPCC__)
  const auto* p = reinterpret_cast<const std::uint64_t*>(address);
  const std::uint64_t lo = __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  const std::uint64_t hi = __hip_atomic_load(p + 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
  out.words[0] = static_cast<std::uint32_t>(lo);
  out.words[1] = static_cast<std::uint32_t>(lo >> 32);
  out.words[2] = static_cast<std::uint32_t>(hi);
  out.words[3] = static_cast<std::uint32_t>(hi >> 32);
#else
  asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(out.words[0]), "=r"(out.words[1]), "=r"(out.words[2]), "=r"(out.words[3])
               : "l"(address)
               : "memory");
#endif
  return out;
}

// Reads a counter without ordering, for polling loops: poll relaxed, then one loadAcquireSystem once
// the value is reached.
PR_DEVICE PR_INLINE std::uint64_t loadRelaxedSystem(const std::uint64_t* counter) {
#if defined(__HIPCC__)
  return __hip_atomic_load(counter, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);
#else
  std::uint64_t value;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(value) : "l"(counter) : "memory");
  return value;
#endif
}

// Reads a word the host may change at any time (abort flag in mapped host memory).
PR_DEVICE PR_INLINE std::uint32_t loadVolatile(const std::uint32_t* word) {
  return *reinterpret_cast<const volatile std::uint32_t*>(word);
}

// Stores a 64-bit word with release at system scope (the host reads error reports this way).
PR_DEVICE PR_INLINE void storeReleaseSystem(std::uint64_t* word, std::uint64_t value) {
#if defined(__HIPCC__)
  __hip_atomic_store(word, value, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
#else
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(word), "l"(value) : "memory");
#endif
}

// Adds to a counter that only this thread ever writes, without an atomic read-modify-write: for counters
// in mapped host memory, where a GPU on PCIe has no atomics (a system-scope atomic there is undefined,
// and compute-sanitizer reports it). The store has release order, as the signal it carries needs.
PR_DEVICE PR_INLINE void addSingleWriterSystem(std::uint64_t* counter, std::uint64_t value) {
  storeReleaseSystem(counter, loadRelaxedSystem(counter) + value);
}

// Nanoseconds from a clock shared by the whole GPU, for deadlines (coarse, but monotonic).
PR_DEVICE PR_INLINE std::uint64_t globalTimerNs() {
#if defined(__HIPCC__)
#if defined(__HIP_DEVICE_COMPILE__)
  // s_memrealtime counts at the device's constant real-time rate (100 MHz on current AMD GPUs).
  return static_cast<std::uint64_t>(__builtin_amdgcn_s_memrealtime()) * 10u;
#else
  return 0;  // the host pass of hipcc parses device functions but never runs them
#endif
#else
  std::uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
#endif
}

// Programmatic dependent launch (Hopper and later; a no-op elsewhere). A kernel launched with
// launchKernel(..., overlap = true) may be scheduled while the kernel before it on the stream is still
// running, so its launch latency hides behind that kernel's tail. It must call awaitPriorGrid() before
// touching any memory: that returns once every earlier kernel of the stream has finished and its
// writes are visible (as if launched normally). allowNextGrid() lets the next overlapping launch be
// scheduled now instead of when this kernel's blocks exit; its blocks then wait in their own
// awaitPriorGrid(), so calling it early never lets the next kernel see this one's work unfinished.
PR_DEVICE PR_INLINE void awaitPriorGrid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
PR_DEVICE PR_INLINE void allowNextGrid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Launches `kernel` with `blocks` x `threads` on `stream`; with `overlap`, as a programmatic dependent
// launch where the platform has one (CUDA), else as an ordinary launch. Returns the launch's error.
template <typename... Params, typename... Args>
hipError_t launchKernel(void (*kernel)(Params...), unsigned blocks, unsigned threads, hipStream_t stream, bool overlap,
                        Args... args) {
#if defined(__HIPCC__)
  (void)overlap;
  kernel<<<blocks, threads, 0, stream>>>(args...);
  return hipGetLastError();
#else
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = overlap ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, args...);
#endif
}

// The PTX version `kernel` was compiled from, as it would run on the current device: a kernel built from
// compute_75 PTX and JIT-compiled on Hopper reports 75, one built as sm_90 code reports 90. -1 on HIP
// (no programmatic launch there) or when the runtime cannot say.
template <typename... Params>
int kernelPtxVersion(void (*kernel)(Params...)) {
#if defined(__HIPCC__)
  (void)kernel;
  return -1;
#else
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, kernel) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return attributes.ptxVersion;
#endif
}

// Loads `kernel`'s code into the current device's context now. The runtime otherwise loads a kernel at
// its first launch (CUDA's lazy loading, the default since CUDA 12.2), and loading may wait for kernels
// already running in the context: a first launch behind a kernel that waits for it never starts (seen
// with ranks sharing one GPU as threads of a process: a peer's first launch of a kernel stalled until
// the waiting rank's deadline). So every kernel is loaded before any runs (loadKernels()).
template <typename... Params>
hipError_t loadKernel(void (*kernel)(Params...)) {
#if defined(__HIPCC__)
  hipFuncAttributes attributes{};
  return hipFuncGetAttributes(&attributes, reinterpret_cast<const void*>(kernel));
#else
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, kernel);
#endif
}

// Yields the issue slot for a short while inside a polling loop.
PR_DEVICE PR_INLINE void pollPause() {
#if defined(__HIPCC__)
  __builtin_amdgcn_s_sleep(1);
#else
  __nanosleep(64);
#endif
}

}  // namespace peerreduce::gpu
#endif
