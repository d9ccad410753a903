// When a channel's operation waits for the previous one (gpu/channel_order.h): only across streams, only
// within one capture state (both eager, or both in the same graph capture), and only once the previous
// one's end was recorded.
#include "gpu/channel_order.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace peerreduce::gpu {
namespace {

StreamHandle stream(int s) { return reinterpret_cast<StreamHandle>(static_cast<std::uintptr_t>(0x40 + s)); }

TEST(ChannelOrder, AnotherStreamWaitsForTheChannelsLastOperation) {
  const ChannelHistory eager{stream(1), 0, true};
  EXPECT_TRUE(mustWaitForPrevious(eager, stream(2), 0));
  EXPECT_FALSE(mustWaitForPrevious(eager, stream(1), 0)) << "one stream orders its own work";
  const ChannelHistory captured{stream(3), 99, true};
  EXPECT_TRUE(mustWaitForPrevious(captured, stream(4), 99)) << "streams joined in one capture";
}

TEST(ChannelOrder, NoWaitAcrossCaptureStatesOrWithoutARecord) {
  EXPECT_FALSE(mustWaitForPrevious(ChannelHistory{}, stream(1), 0)) << "the channel's first operation";
  EXPECT_FALSE(mustWaitForPrevious(ChannelHistory{stream(1), 0, false}, stream(2), 0)) << "its record failed";
  EXPECT_FALSE(mustWaitForPrevious(ChannelHistory{stream(1), 0, true}, stream(2), 7))
      << "a capture cannot wait for eager work";
  EXPECT_FALSE(mustWaitForPrevious(ChannelHistory{stream(1), 7, true}, stream(2), 0))
      << "eager work cannot wait for a capture";
  EXPECT_FALSE(mustWaitForPrevious(ChannelHistory{stream(1), 7, true}, stream(2), 8)) << "nor one capture for another";
}

}  // namespace
}  // namespace peerreduce::gpu
