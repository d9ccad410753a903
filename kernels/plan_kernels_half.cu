// The plan interpreter for the half element types (kernels/typed_launch.h says why per group).
#include "plan_kernels.cuh"

namespace peerreduce::gpu {

PR_HALF_TYPES(PR_INSTANTIATE_PLAN_KERNELS)

}  // namespace peerreduce::gpu
