// The GPU side of channel order (gpu/channel_order.h): one event per channel, recorded after each
// operation, waited for by the next operation's stream when that is another stream of the same capture
// state. Also answers which capture a stream is in (StreamCaptures).
#pragma once

#include <array>
#include <cstdint>

#include "gpu/channel_order.h"
#include "peerreduce/status.h"
#include "peerreduce/transport.h"
#include "portability.h"

namespace peerreduce::gpu {

class ChannelOrderGpu {
 public:
  ChannelOrderGpu(int rank, int device) : rank_(rank), device_(device) {}
  ChannelOrderGpu(const ChannelOrderGpu&) = delete;
  ChannelOrderGpu& operator=(const ChannelOrderGpu&) = delete;
  ~ChannelOrderGpu() { release(); }

  // The capture `stream` is in now (0: none).
  StatusOr<std::uint64_t> captureOf(hipStream_t stream) const;
  // Before an operation of `channel` on `stream`: waits for the channel's previous operation when
  // mustWaitForPrevious says so. The caller has made the device current.
  Status before(int channel, std::uint64_t capture, hipStream_t stream);
  // After it was enqueued: records the channel's event on `stream`.
  Status after(int channel, std::uint64_t capture, hipStream_t stream);
  // Destroys the events (the transport synchronised the device first).
  void release();

 private:
  struct Channel {
    ChannelHistory last;
    hipEvent_t event = nullptr;
  };
  int rank_;
  int device_;
  std::array<Channel, kMaxChannels> channels_{};
};

}  // namespace peerreduce::gpu
