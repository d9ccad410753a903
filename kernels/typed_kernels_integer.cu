// The push and fused kernels for the integer element types (kernels/typed_launch.h says why per group).
#include "fused_kernels.cuh"
#include "push_kernels.cuh"

namespace peerreduce::gpu {

PR_INTEGER_TYPES(PR_INSTANTIATE_TYPED_KERNELS)

}  // namespace peerreduce::gpu
