// The fused kernels for the float8 element types (kernels/typed_launch.h says why per group, and why float8's
// families have a file each).
#include "fused_kernels.cuh"

namespace peerreduce::gpu {

PR_FLOAT8_TYPES(PR_INSTANTIATE_FUSED_KERNELS)

}  // namespace peerreduce::gpu
