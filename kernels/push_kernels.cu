// The push kernels' entry points: each element type's launch and load are compiled with its group
// (kernels/typed_launch.h, kernels/push_kernels.cuh); this file picks the type.
#include "dispatch.h"
#include "plan_kernel_launch.h"
#include "typed_launch.h"

namespace peerreduce::gpu {

hipError_t launchPushKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream) {
  return kernels::visitDataType(dtype, hipErrorInvalidValue, [&](auto type) {
    return push::launchFor<typename decltype(type)::type>(args, blocks, stream);
  });
}

hipError_t loadPushKernels() {
  return kernels::forEveryDataType(hipSuccess,
                                   [](auto type) { return push::loadFor<typename decltype(type)::type>(); });
}

}  // namespace peerreduce::gpu
