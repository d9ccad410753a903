// OperationLog: ranks of one machine compare their operations through shared host memory (internal).
//
// Every rank's k-th operation on a communicator must be the same collective with the same count, type,
// op and root on every rank. On the simulator the engine compares them (sim/op_agreement.h); on GPUs
// nothing did, so ranks that disagreed ran kernels over each other's scratch with the wrong layout:
// a wait that never ended (until the deadline), or, with the same kernel and another count or type, a
// result silently wrong.
//
// The log is one shared segment (memory/shared_host_segment.h) per communicator, made by rank 0 and
// mapped by every rank at creation: for each rank, a ring of kEntries entries, entry k % kEntries holding
// the descriptor of its operation k. Posting operation k, a rank writes its entry, then (every entry access
// sequentially consistent) reads every peer's entry k: a peer already there with another descriptor is a mismatch, a
// peer not there yet (or already past k by a whole ring) is not checked by this rank, and checks this rank's entry
// itself when it posts. Of two ranks that disagree, the later poster always sees the other's entry (both write before
// they read), so one of them finds every mismatch among ranks within kEntries operations of each other, at the call,
// before anything is launched. Nothing waits: a post is a few hundred nanoseconds of host memory traffic.
//
// The rank that finds a mismatch refuses the operation (kMismatch naming both ranks, the operation's
// number and both descriptors), writes a report into the segment and sets every rank's stop word (a page
// of the segment per rank); the others' operations cannot complete without it: a transport that reads
// its rank's stop word as an abort word (StopWordAdoption) ends their waits at once, any other at its
// deadline, and then they find the report and return the same mismatch instead of the wait's error
// (explain()). The error is sticky on every rank, as the simulator's: every later post returns the report.
//
// Entries are seqlocks: the writer marks the entry busy, writes the fields, then publishes the
// operation's number; a reader takes the fields only when the number it read before and after them is
// the one it looks for.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "memory/shared_host_segment.h"
#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce {

// What ranks must agree on for one operation. `items` and `items_hash`: a batch's buffer count and a hash
// of their counts (0 for a single buffer).
struct OperationDescriptor {
  Collective collective = Collective::kAllReduce;
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  std::uint64_t count = 0;
  std::uint64_t items = 0;
  std::uint64_t items_hash = 0;

  bool operator==(const OperationDescriptor&) const = default;
  // "allreduce of 1024 fp32 (sum)", "broadcast of 8 int8 from rank 1", "a batch of 3 allreduces, 96 fp32 (sum)".
  std::string describe() const;
};

class OperationLog {
 public:
  static constexpr std::uint64_t kEntries = 256;

  // Bytes of the segment for `world_size` ranks.
  static std::size_t segmentBytes(int world_size);
  // Rank 0's log: a new segment. Others: open(segment name).
  static StatusOr<std::unique_ptr<OperationLog>> create(int rank, int world_size);
  static StatusOr<std::unique_ptr<OperationLog>> open(int rank, int world_size, const std::string& name);

  const std::string& name() const { return segment_->name(); }
  // `rank`'s stop word: 0 until a rank finds a mismatch, then 1; alone on its page. Valid while keepAlive()
  // (or this log) is held.
  std::uint32_t* stopWord(int rank) const;
  // Holds the segment mapped (for a transport that reads a stop word after this log is gone).
  std::shared_ptr<void> keepAlive() const { return segment_; }
  // Removes the segment's name once every rank mapped it (rank 0 only; others: nothing).
  Status unlink();

  // Records `descriptor` as this rank's next operation and compares it with the peers' that are there.
  // kMismatch (and a report every rank finds) when a peer posted another descriptor as the same
  // operation, or when any rank reported a mismatch before.
  Status post(const OperationDescriptor& descriptor);
  // `failure` of a wait, or, when a rank reported a mismatch, that mismatch (the reason a peer never
  // arrived). Ok stays ok.
  Status explain(const Status& failure) const;
  // The reported mismatch, ok when none.
  Status reported() const;

  std::uint64_t posted() const { return next_; }

 private:
  OperationLog(int rank, int world_size, SharedHostSegment segment);
  void stopEveryRank() const;

  int rank_;
  int world_size_;
  std::shared_ptr<SharedHostSegment> segment_;
  std::uint64_t next_ = 0;  // this rank's next operation number
};

}  // namespace peerreduce
