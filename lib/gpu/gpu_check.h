// PR_GPU_CHECK: the one checking macro for GPU runtime calls. On failure it returns from the calling
// function a Status that records the failing call, the runtime's error name and text, file:line and
// the rank, so a failure on rank 3 of 8 says so.
#pragma once

#include <string>

#include "peerreduce/status.h"
#include "portability.h"

namespace peerreduce::gpu {

Status gpuError(hipError_t error, const char* call, const char* file, int line, int rank);

}  // namespace peerreduce::gpu

#define PR_GPU_CHECK(rank, call)                                                          \
  do {                                                                                    \
    const hipError_t pr_gpu_error_ = (call);                                              \
    if (pr_gpu_error_ != hipSuccess)                                                      \
      return ::peerreduce::gpu::gpuError(pr_gpu_error_, #call, __FILE__, __LINE__, rank); \
  } while (false)
