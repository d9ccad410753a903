// The push and fused kernels for the float element types (kernels/typed_launch.h says why per group).
#include "fused_kernels.cuh"
#include "push_kernels.cuh"

namespace peerreduce::gpu {

PR_FLOAT_TYPES(PR_INSTANTIATE_TYPED_KERNELS)

// One kernel of each family, compiled with the same flags as the rest of its family.
int fusedKernelsPtxVersion() { return kernelPtxVersion(fused::oneShotKernel<float, kernels::Sum>); }
int pushKernelsPtxVersion() { return kernelPtxVersion(push::pushTwoShotKernel<float, kernels::Sum>); }

}  // namespace peerreduce::gpu
