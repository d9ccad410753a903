// The push and fused kernels for the float8 element types (kernels/typed_launch.h says why per group).
#include "fused_kernels.cuh"
#include "push_kernels.cuh"

namespace peerreduce::gpu {

PR_FLOAT8_TYPES(PR_INSTANTIATE_TYPED_KERNELS)

}  // namespace peerreduce::gpu
