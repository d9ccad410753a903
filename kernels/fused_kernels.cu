// The fused kernels' entry points: each element type's launch and load are compiled with its group
// (kernels/typed_launch.h, kernels/fused_kernels.cuh); this file picks the type, and hands the pushing
// shapes to kernels/push_kernels.cu.
#include "dispatch.h"
#include "plan_kernel_launch.h"
#include "typed_launch.h"

namespace peerreduce::gpu {

hipError_t launchFusedKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream) {
  if (isPushKernel(args.fused)) return launchPushKernel(args, dtype, blocks, stream);
  return kernels::visitDataType(dtype, hipErrorInvalidValue, [&](auto type) {
    return fused::launchFor<typename decltype(type)::type>(args, blocks, stream);
  });
}

hipError_t loadFusedKernels() {
  const hipError_t pushed = loadPushKernels();
  if (pushed != hipSuccess) return pushed;
  return kernels::forEveryDataType(hipSuccess,
                                   [](auto type) { return fused::loadFor<typename decltype(type)::type>(); });
}

}  // namespace peerreduce::gpu
