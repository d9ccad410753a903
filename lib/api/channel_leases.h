// The channels of a communicator and their scratch leases from the symmetric pool. A channel is a signal
// area on the transport (its counters, epochs and receive lines on GPUs) with its own scratch; its
// operations run one after another in the order they were called, whatever stream each is on.
//
// Which channel. Operations match across ranks by their order of call on the communicator (NCCL's rule),
// never by stream: every operation enqueued for immediate execution uses channel 0, and the operations
// captured into a graph use a channel of their own among 1..kMaxChannels-1, given to each capture in the
// order captures first appear (round robin). Every rank issues the same operations and captures in the
// same order, so every rank picks the same channel for each operation however it numbers its streams: a
// program may use any number of streams. A graph replay then runs on its own channel beside eager work
// on other streams; two graphs that share a channel (more captures than channels) must not replay at
// the same time, as NCCL asks of any two operations of one communicator.
//
// Scratch. A lease is one pool handle, so compaction may move it between operations, and each operation
// pins it by copying it while it submits. Every rank's pool is in the same state and every rank makes the
// same calls, so every rank gets the same sizes at the same offsets.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "memory/symmetric_pool.h"
#include "peerreduce/status.h"
#include "peerreduce/transport.h"

namespace peerreduce {

struct ScratchSizes {
  std::size_t preferred_bytes = 0;  // PEERREDUCE_SCRATCH_BYTES
  std::size_t minimum_bytes = 0;    // below this an operation fails rather than crawl
  std::size_t alignment_bytes = 0;  // every lease starts on it (plans' slot alignment at least)
};

class ChannelLeases {
 public:
  // `pool` must outlive this object.
  ChannelLeases(SymmetricPool& pool, const ScratchSizes& sizes, int rank) : pool_(pool), sizes_(sizes), rank_(rank) {}

  // The channel of an operation enqueued into graph capture `capture` (0: not captured): 0 for eager
  // work; for a capture, the channel it was given at its first operation, else the next capture channel.
  int channelOf(std::uint64_t capture);

  // The scratch of `channel` for one operation, pinned by the returned copy: the lease when it has its
  // target size, else a new best-effort block. Channel 0's target is the preferred size; each capture
  // channel at most an even share of what is free for it and the channels that may still come, so every
  // channel finds scratch with the default settings. kInternal for a channel outside 0..kMaxChannels-1.
  StatusOr<PoolBlock> lease(int channel);
  // Channel 0's scratch, taken at creation while the pool is empty.
  StatusOr<PoolBlock> leaseFirst() { return leaseChannel(0); }

  // Gives every lease back to the pool (the next operation takes a new one).
  void releaseAll();
  std::size_t bytesHeld() const;
  // Channels that have carried an operation or hold scratch (0 counts from creation).
  int channelsUsed() const;

 private:
  struct Channel {
    std::uint64_t capture = 0;  // the capture it serves (capture channels; 0 while unused)
    PoolBlock scratch;
    std::size_t target_bytes = 0;
  };
  std::size_t target(int channel) const;
  StatusOr<PoolBlock> leaseChannel(int channel);

  SymmetricPool& pool_;
  ScratchSizes sizes_;
  int rank_;
  std::array<Channel, kMaxChannels> channels_;
  int next_capture_channel_ = 1;  // the channel the next new capture gets
};

}  // namespace peerreduce
