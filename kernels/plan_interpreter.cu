// The plan interpreter's entry points (the kernel: kernels/plan_kernels.cuh): each element type's launch and
// load are compiled with its group (kernels/typed_launch.h, kernels/plan_kernels_<group>.cu); this file picks
// the type, and routes the fused, low-latency and line shapes to their own kernels.
#include <algorithm>

#include "device_plan.h"
#include "dispatch.h"
#include "plan_kernel_launch.h"
#include "portability.h"
#include "typed_launch.h"

namespace peerreduce::gpu {

hipError_t launchPlanKernel(const LaunchArgs& args, int dtype, unsigned blocks, hipStream_t stream) {
  if (args.fused == kLowLatencyOneShot || args.fused == kLowLatencyTwoShot) {
    return launchLowLatencyKernel(args, dtype, blocks, stream);
  }
  if (args.fused == kLowLatencyReduceScatter || args.fused == kLowLatencyAllGather ||
      args.fused == kLowLatencyBroadcast) {
    return launchCollectiveLineKernel(args, dtype, blocks, stream);
  }
  if (args.fused != 0) return launchFusedKernel(args, dtype, blocks, stream);
  // Every dtype through the one dispatch (dispatch.h), the op in the type's own file; an unknown value of either
  // is a launch error.
  return kernels::visitDataType(dtype, hipErrorInvalidValue, [&](auto type) {
    return plan::launchFor<typename decltype(type)::type>(args, blocks, stream);
  });
}

hipError_t loadKernels() {
  const hipError_t interpreter =
      kernels::forEveryDataType(hipSuccess, [](auto type) { return plan::loadFor<typename decltype(type)::type>(); });
  if (interpreter != hipSuccess) return interpreter;
  const hipError_t fused = loadFusedKernels();
  if (fused != hipSuccess) return fused;
  const hipError_t lines = loadLineKernels();
  return lines != hipSuccess ? lines : loadCollectiveLineKernels();
}

int kernelsPtxVersion() {
  return std::min({planKernelsPtxVersion(), fusedKernelsPtxVersion(), pushKernelsPtxVersion(), lineKernelsPtxVersion(),
                   collectiveLineKernelsPtxVersion()});
}

}  // namespace peerreduce::gpu
