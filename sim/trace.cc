#include "trace.h"

#include <cstdio>

namespace peerreduce::sim {
namespace {

// Limit on events kept for a trace: about 100 MB of JSON, more than a viewer opens comfortably.
constexpr std::size_t kMaxTraceEvents = 1'000'000;

std::string jsonEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void TraceRecorder::fingerprintOnly(int rank, std::uint64_t op, int step, double start_us) {
  hash_.add(rank);
  hash_.add(op);
  hash_.add(step);
  hash_.add(start_us);
}

void TraceRecorder::record(TraceEvent event) {
  fingerprintOnly(event.rank, event.op, event.step, event.start_us);
  if (!keep_events_) return;
  if (events_.size() < kMaxTraceEvents) {
    events_.push_back(std::move(event));
  } else {
    dropped_ += 1;
  }
}

void TraceRecorder::clear() {
  hash_ = Fnv1a();
  events_.clear();
  dropped_ = 0;
}

std::string TraceRecorder::chromeJson(int world_size) const {
  char buf[512];
  // The trace's own metadata (Chrome's trace format keeps "otherData" as it is): how many events it
  // holds and how many were left out at the limit, so a cut trace says so.
  std::snprintf(buf, sizeof(buf),
                "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"events_kept\":%zu,\"events_dropped\":%llu,"
                "\"event_limit\":%zu},\"traceEvents\":[\n",
                events_.size(), static_cast<unsigned long long>(dropped_), kMaxTraceEvents);
  std::string out = buf;
  for (int r = 0; r < world_size; ++r) {
    std::snprintf(buf, sizeof(buf),
                  "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"rank %d\"}},\n", r,
                  r);
    out += buf;
  }
  for (const TraceEvent& e : events_) {
    std::snprintf(buf, sizeof(buf),
                  "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"op%llu\",\"pid\":1,\"tid\":%d,\"ts\":%.4f,\"dur\":%.4f,"
                  "\"args\":{\"op\":%llu,\"step\":%d,\"bytes\":%llu}},\n",
                  jsonEscape(e.name).c_str(), static_cast<unsigned long long>(e.op), e.rank, e.start_us,
                  e.end_us - e.start_us, static_cast<unsigned long long>(e.op), e.step,
                  static_cast<unsigned long long>(e.bytes));
    out += buf;
    if (e.flow_peer >= 0) {
      // Flow arrows: "s" at the signal's end on the sender, "f" at the wait's end on the receiver.
      std::snprintf(buf, sizeof(buf),
                    "{\"ph\":\"%s\",\"name\":\"signal\",\"cat\":\"signal\",\"id\":%llu,\"pid\":1,\"tid\":%d,"
                    "\"ts\":%.4f%s},\n",
                    e.flow_start ? "s" : "f", static_cast<unsigned long long>(e.flow_id), e.rank,
                    e.flow_start ? e.end_us : e.end_us, e.flow_start ? "" : ",\"bp\":\"e\"");
      out += buf;
    }
  }
  // Close the array with an object so every element above may end with a comma.
  out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"peerreduce simulator\"}}\n]}\n";
  return out;
}

}  // namespace peerreduce::sim
