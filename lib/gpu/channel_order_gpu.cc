#include "gpu/channel_order_gpu.h"

#include <string>

#include "gpu/gpu_check.h"

namespace peerreduce::gpu {

StatusOr<std::uint64_t> ChannelOrderGpu::captureOf(hipStream_t stream) const {
  hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
  unsigned long long id = 0;
  PR_GPU_CHECK(rank_, hipStreamGetCaptureInfo(stream, &status, &id));
  return status == hipStreamCaptureStatusNone ? std::uint64_t{0} : static_cast<std::uint64_t>(id);
}

Status ChannelOrderGpu::before(int channel, std::uint64_t capture, hipStream_t stream) {
  if (channel < 0 || channel >= kMaxChannels) {
    return invalidArgumentError("rank " + std::to_string(rank_) + ": channel " + std::to_string(channel) +
                                " outside 0.." + std::to_string(kMaxChannels - 1));
  }
  const Channel& c = channels_[static_cast<std::size_t>(channel)];
  if (mustWaitForPrevious(c.last, stream, capture)) PR_GPU_CHECK(rank_, hipStreamWaitEvent(stream, c.event, 0));
  return Status::ok();
}

Status ChannelOrderGpu::after(int channel, std::uint64_t capture, hipStream_t stream) {
  Channel& c = channels_[static_cast<std::size_t>(channel)];
  if (c.event == nullptr) PR_GPU_CHECK(rank_, hipEventCreateWithFlags(&c.event, hipEventDisableTiming));
  c.last.recorded = false;  // until the record below succeeds
  PR_GPU_CHECK(rank_, hipEventRecord(c.event, stream));
  c.last = ChannelHistory{stream, capture, true};
  return Status::ok();
}

void ChannelOrderGpu::release() {
  for (Channel& c : channels_) {
    if (c.event != nullptr) (void)hipEventDestroy(c.event);
    c = Channel{};
  }
}

}  // namespace peerreduce::gpu
