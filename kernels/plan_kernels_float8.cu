// The plan interpreter for the float8 element types (kernels/typed_launch.h says why per group).
#include "plan_kernels.cuh"

namespace peerreduce::gpu {

PR_FLOAT8_TYPES(PR_INSTANTIATE_PLAN_KERNELS)

}  // namespace peerreduce::gpu
