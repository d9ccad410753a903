// Host entry point to the plan interpreter kernel (kernels/plan_interpreter.cu).
#pragma once

#include "device_plan.h"
#include "portability.h"

namespace peerreduce::gpu {

// Threads per block: 16 warps keep enough 16-byte loads in flight per SM to saturate a peer link
// with one block per SM.
inline constexpr unsigned kPlanKernelThreads = 512;

// Launches the interpreter for one rank's program with `blocks` blocks on `stream`. dtype and op are
// DataType and ReduceOp values (checked by the caller). Returns the launch's error, if any.
hipError_t launchPlanKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream);

}  // namespace peerreduce::gpu
