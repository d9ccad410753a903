// The plan interpreter for the float element types (kernels/typed_launch.h says why per group).
#include "plan_kernels.cuh"

namespace peerreduce::gpu {

PR_FLOAT_TYPES(PR_INSTANTIATE_PLAN_KERNELS)

// One kernel of the family, compiled with the same flags as the rest of it.
int planKernelsPtxVersion() { return kernelPtxVersion(plan::planKernel<float, kernels::Sum>); }

}  // namespace peerreduce::gpu
