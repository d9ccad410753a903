// The portability header: the one place that knows which GPU platform the code is built for.
//
// All GPU code in peerreduce is written against HIP names. This header maps them:
// - built by hipcc (AMD): the real <hip/hip_runtime.h>;
// - built by nvcc (NVIDIA): a small mapping of the HIP names peerreduce uses onto CUDA 13
//   (Debian's HIP headers for NVIDIA do not compile with CUDA 13);
// - built by a plain host compiler: only the qualifiers, so the reduce arithmetic that kernels share
//   with the simulator compiles as ordinary host code.
// Nothing else in the project may test the platform with #if; it includes this header instead.
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define PR_GPU_PLATFORM_HIP 1
#define PR_HOST_DEVICE __host__ __device__
#define PR_DEVICE __device__
#define PR_INLINE __forceinline__
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#define PR_GPU_PLATFORM_CUDA 1
#define PR_HOST_DEVICE __host__ __device__
#define PR_DEVICE __device__
#define PR_INLINE __forceinline__
#else
#define PR_GPU_PLATFORM_NONE 1
#define PR_HOST_DEVICE
#define PR_DEVICE
#define PR_INLINE inline
#endif
