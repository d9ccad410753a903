// GPU staging in a build without CUDA: there is no device to stage through.
#include "nccl/device_staging.h"
#include "peerreduce/gpu.h"

namespace peerreduce::nccl {

StatusOr<std::unique_ptr<DeviceStaging>> createGpuStaging(int device) {
  return unsupportedError(std::string("device ") + std::to_string(device) + ": this build of peerreduce (GPU " +
                          gpuPlatformName() + ") has no CUDA; rebuild with PEERREDUCE_GPU=cuda");
}

}  // namespace peerreduce::nccl
