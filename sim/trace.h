// TraceRecorder: what the simulator executed, as a fingerprint and (optionally) a Chrome trace.
//
// The fingerprint hashes every executed action in order (rank, operation, step, virtual start time),
// so two runs with equal fingerprints ran the same interleaving with the same timing: the
// determinism check compares them. The Chrome trace-event JSON shows one row per rank with each step
// as a slice and each signal as an arrow from sender to receiver; it opens in Perfetto
// (ui.perfetto.dev) or chrome://tracing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/hash.h"

namespace peerreduce::sim {

struct TraceEvent {
  int rank = 0;
  std::uint64_t op = 0;
  int step = -1;  // -1: entry fence
  std::string name;
  double start_us = 0.0;
  double end_us = 0.0;
  std::uint64_t bytes = 0;
  int flow_peer = -1;         // signal: receiver; wait: sender
  std::uint64_t flow_id = 0;  // pairs a signal with the wait it satisfied
  bool flow_start = false;
};

class TraceRecorder {
 public:
  explicit TraceRecorder(bool keep_events) : keep_events_(keep_events) {}

  void record(TraceEvent event);
  // Cheap path when events are not kept: only the fingerprint is updated.
  void fingerprintOnly(int rank, std::uint64_t op, int step, double start_us);

  std::uint64_t fingerprint() const { return hash_.value(); }
  const std::vector<TraceEvent>& events() const { return events_; }
  // Events recorded beyond the limit of kept events (kMaxTraceEvents): counted in the fingerprint, left
  // out of the trace file, and said so in its metadata.
  std::uint64_t droppedEvents() const { return dropped_; }
  bool keepsEvents() const { return keep_events_; }
  std::string chromeJson(int world_size) const;
  void clear();

 private:
  bool keep_events_;
  Fnv1a hash_;
  std::vector<TraceEvent> events_;
  std::uint64_t dropped_ = 0;
};

}  // namespace peerreduce::sim
