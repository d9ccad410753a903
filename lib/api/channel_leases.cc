#include "api/channel_leases.h"

#include <algorithm>
#include <string>

namespace peerreduce {

int ChannelLeases::channelOf(std::uint64_t capture) {
  if (capture == 0) return 0;
  for (int c = 1; c < kMaxChannels; ++c) {
    if (channels_[static_cast<std::size_t>(c)].capture == capture) return c;
  }
  const int channel = next_capture_channel_;
  next_capture_channel_ = next_capture_channel_ + 1 < kMaxChannels ? next_capture_channel_ + 1 : 1;
  channels_[static_cast<std::size_t>(channel)].capture = capture;
  return channel;
}

std::size_t ChannelLeases::target(int channel) const {
  if (channel == 0) return sizes_.preferred_bytes;
  const PoolBlock& held = channels_[static_cast<std::size_t>(channel)].scratch;
  const std::size_t available = pool_.stats().largest_free_block_bytes + (held.valid() ? held.size() : 0);
  const std::size_t share = available / static_cast<std::size_t>(kMaxChannels - channel);
  return std::max(std::min(sizes_.preferred_bytes, share), sizes_.minimum_bytes);
}

StatusOr<PoolBlock> ChannelLeases::lease(int channel) {
  if (channel < 0 || channel >= kMaxChannels) {
    return internalError("rank " + std::to_string(rank_) + ": scratch asked for channel " + std::to_string(channel) +
                         " outside 0.." + std::to_string(kMaxChannels - 1));
  }
  return leaseChannel(channel);
}

StatusOr<PoolBlock> ChannelLeases::leaseChannel(int channel) {
  Channel& c = channels_[static_cast<std::size_t>(channel)];
  PoolBlock& held = c.scratch;
  if (held.valid() && held.size() >= c.target_bytes) return held;
  c.target_bytes = target(channel);
  // Less than the target (an earlier exhaustion) or none: give it back first, so its range counts as
  // free, then take as much as the pool has. An exhaustion is symmetric (every rank's pool is alike).
  held.reset();
  auto block =
      pool_.allocateBestEffort(c.target_bytes, sizes_.minimum_bytes, BlockKind::kScratch, sizes_.alignment_bytes);
  if (!block.isOk()) {
    return block.status().withContext(
        "rank " + std::to_string(rank_) + ": no room for even the minimum scratch of " +
        std::to_string(sizes_.minimum_bytes) + " bytes (preferred " + std::to_string(c.target_bytes) +
        ", PEERREDUCE_SCRATCH_BYTES); release symmetric blocks (allocateSymmetric) or raise the pool");
  }
  held = std::move(block).value();
  return held;
}

void ChannelLeases::releaseAll() {
  for (Channel& c : channels_) c.scratch.reset();
}

std::size_t ChannelLeases::bytesHeld() const {
  std::size_t held = 0;
  for (const Channel& c : channels_) held += c.scratch.size();
  return held;
}

int ChannelLeases::channelsUsed() const {
  int used = 1;
  for (int c = 1; c < kMaxChannels; ++c) {
    const Channel& channel = channels_[static_cast<std::size_t>(c)];
    if (channel.capture != 0 || channel.scratch.valid()) used = c + 1;
  }
  return used;
}

}  // namespace peerreduce
