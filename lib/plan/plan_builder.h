// PlanBuilder: the helper algorithms use to write plans without counting signals by hand.
//
// An algorithm emits its phases across all ranks in an order where every signal is emitted before
// the waits that consume it; waitForAll() then waits for exactly the signals emitted so far, so wait
// values never need to be computed by hand. finish() appends the done signals every plan owes (one to
// each peer whose memory a rank touched, right after its last access there) and sizes the scratch.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "peerreduce/plan.h"

namespace peerreduce {

class PlanBuilder {
 public:
  // `num_chunks`: chunks per block; steps name chunks by their index over every block of `collective`.
  PlanBuilder(Algorithm algorithm, int world_size, int num_chunks, int num_flags, bool in_place,
              Collective collective = Collective::kAllReduce, int root = 0);

  void copy(int rank, int chunk, BufferRef src, BufferRef dst);
  // A copy moved by a copy engine (Step::copy_engine).
  void copyEngineCopy(int rank, int chunk, BufferRef src, BufferRef dst);
  void reduce(int rank, int chunk, std::span<const BufferRef> sources, BufferRef dst, bool finalize);
  void signal(int from, int to, int flag);
  // Waits on `rank` until every signal emitted so far from `writer` on `flag` has arrived.
  void waitForAll(int rank, int writer, int flag);

  int worldSize() const { return plan_.world_size; }
  // Scratch slots from `slot` on are each rank's own (Plan::private_slots); finish() counts them.
  void keepPrivateFrom(int slot) { first_private_ = slot; }

  Plan finish(std::string description);

 private:
  std::size_t sentIndex(int holder, int writer, int flag) const;

  Plan plan_;
  std::vector<std::uint32_t> sent_;  // signals emitted so far, indexed like signalCounts()
  int first_private_ = -1;           // keepPrivateFrom(); -1: no private slots
};

inline BufferRef inputOf(int rank) { return BufferRef{rank, BufferKind::kInput, 0}; }
inline BufferRef outputOf(int rank) { return BufferRef{rank, BufferKind::kOutput, 0}; }
inline BufferRef scratchOf(int rank, int slot) { return BufferRef{rank, BufferKind::kScratch, slot}; }

}  // namespace peerreduce
