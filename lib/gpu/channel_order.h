// The order of a channel's operations across streams (peerreduce/transport.h, kMaxChannels): an
// operation enqueued on one stream runs after the channel's previous operation even when that one was
// enqueued on another stream, as NCCL orders the operations of a communicator. On one stream the stream
// orders them; across streams the transport records an event after each operation and makes the next
// operation's stream wait for it.
//
// Graph captures. An event recorded into a capture can be waited for only by streams of the same
// capture, and eager work cannot wait for a capture at all: so an operation waits for its channel's
// previous one only when both are eager or both belong to one capture. Channels separate eager work from
// each capture's (lib/api/channel_leases.h), so the only operations of one channel in different capture
// states are those of two captures that share a capture channel, which must not replay at once.
#pragma once

#include <cstdint>

#include "peerreduce/transport_capabilities.h"

namespace peerreduce::gpu {

// What the channel's last operation was enqueued on.
struct ChannelHistory {
  StreamHandle stream = nullptr;
  std::uint64_t capture = 0;  // its graph capture, 0 when eager
  bool recorded = false;      // an event marks its end on `stream`
};

// Whether an operation on `stream` in `capture` must make its stream wait for the event that ends the
// channel's last operation: there is one, on another stream, in the same capture state.
inline bool mustWaitForPrevious(const ChannelHistory& last, StreamHandle stream, std::uint64_t capture) {
  return last.recorded && last.stream != stream && last.capture == capture;
}

}  // namespace peerreduce::gpu
