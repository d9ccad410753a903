// The communicator's profiler (internal; the public types are in peerreduce/profiler.h).
//
// A ring of `capacity` records; record slot s uses the transport's time marks 2s (before the first
// segment) and 2s + 1 (after the last). Marks are placed while the operation is enqueued and read
// when the records are asked for, so nothing waits for the GPU on the allreduce path. Profiling never
// fails an allreduce: a mark the transport cannot place leaves that record untimed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "peerreduce/profiler.h"
#include "peerreduce/status.h"
#include "peerreduce/transport.h"

namespace peerreduce {

class Profiler {
 public:
  // kInvalidArgument for a capacity of 0 or above kMaxProfileCapacity; the transport's error when it
  // cannot time (kUnsupported).
  static StatusOr<std::unique_ptr<Profiler>> create(std::size_t capacity, int world_size, Transport& transport);

  // Around one allreduce: begin before its first segment is submitted, end after its last.
  void begin(StreamHandle stream);
  void end(StreamHandle stream, const OperationProfile& what, bool submitted);

  // The records held, oldest first, with the durations of every operation finished by now.
  StatusOr<std::vector<OperationProfile>> records();
  StatusOr<ProfileSummary> summary();

 private:
  struct Entry {
    OperationProfile profile;
    bool marked = false;  // both marks placed: the duration will come
  };
  Profiler(std::size_t capacity, int world_size, TimeMarks& marks)
      : entries_(capacity), world_size_(world_size), marks_(marks) {}
  std::size_t slot() const { return static_cast<std::size_t>(next_ % entries_.size()); }

  std::vector<Entry> entries_;
  int world_size_;
  TimeMarks& marks_;        // the transport's capability; lives as long as the transport
  std::uint64_t next_ = 0;  // sequence of the next operation
  bool begin_marked_ = false;
};

}  // namespace peerreduce
