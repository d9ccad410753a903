// The streams a communicator has seen, in order of first use, each with its scratch lease from the
// symmetric pool. A stream's number (its slot) selects its signal area on the transport; its lease is
// one pool handle, so compaction may move it between operations, and each operation pins it by copying
// it while it submits. Every rank's pool is in the same state and every rank makes the same calls, so
// every rank gets the same sizes at the same offsets.
#pragma once

#include <array>
#include <cstddef>

#include "memory/symmetric_pool.h"
#include "peerreduce/status.h"
#include "peerreduce/transport.h"

namespace peerreduce {

struct ScratchSizes {
  std::size_t preferred_bytes = 0;  // PEERREDUCE_SCRATCH_BYTES
  std::size_t minimum_bytes = 0;    // below this an operation fails rather than crawl
  std::size_t alignment_bytes = 0;  // every lease starts on it (plans' slot alignment at least)
};

class StreamLeases {
 public:
  // `pool` must outlive this object.
  StreamLeases(SymmetricPool& pool, const ScratchSizes& sizes, int rank) : pool_(pool), sizes_(sizes), rank_(rank) {}

  // The slot of `stream`: its number by first use; kUnsupported for one stream more than kMaxStreams
  // (nothing changes).
  StatusOr<int> slotOf(StreamHandle stream);

  // The scratch of slot `slot` (a slot slotOf gave) for one operation, pinned by the returned copy: the
  // lease when it has its target size, else a new best-effort block. The first stream's target is the
  // preferred size; each later one at most an even share of what is free for it and the streams that
  // may still come, so every one of kMaxStreams streams finds scratch with the default settings.
  StatusOr<PoolBlock> lease(int slot);
  // Slot 0's scratch, taken before any stream is known (at creation, while the pool is empty): the
  // first stream used becomes slot 0 and finds it ready.
  StatusOr<PoolBlock> leaseFirst() { return leaseSlot(0); }

  // Gives every lease back to the pool (the next operation takes a new one).
  void releaseAll();
  std::size_t bytesHeld() const;
  int streamsUsed() const { return used_; }

 private:
  struct Slot {
    StreamHandle stream = nullptr;
    PoolBlock scratch;
    std::size_t target_bytes = 0;
  };
  std::size_t target(int slot) const;
  StatusOr<PoolBlock> leaseSlot(int slot);

  SymmetricPool& pool_;
  ScratchSizes sizes_;
  int rank_;
  std::array<Slot, kMaxStreams> slots_;
  int used_ = 0;
};

}  // namespace peerreduce
