#include "nccl/call_counters.h"

#include <algorithm>
#include <cstdio>

namespace peerreduce::nccl {

void CallCounters::count(CallKind kind, bool was_taken, std::size_t bytes) {
  Tally& tally = (was_taken ? taken : forwarded)[static_cast<std::size_t>(kind)];
  ++tally.calls;
  tally.bytes += bytes;
}

void CallCounters::time(bool was_taken, std::uint64_t ns) {
  HostTime& host = was_taken ? taken_host : forwarded_host;
  ++host.calls;
  host.total_ns += ns;
  host.max_ns = std::max(host.max_ns, ns);
}

namespace {

// "2.1 us (most 9.8)": the mean and the largest, in microseconds with one decimal.
std::string hostTimeText(const CallCounters::HostTime& host) {
  if (host.calls == 0) return "none timed";
  char text[64];
  std::snprintf(text, sizeof(text), "%.1f us (most %.1f)",
                static_cast<double>(host.total_ns) / static_cast<double>(host.calls) / 1000.0,
                static_cast<double>(host.max_ns) / 1000.0);
  return text;
}

CallCounters::Tally sum(const std::array<CallCounters::Tally, kCallKindCount>& tallies) {
  CallCounters::Tally total;
  for (const auto& tally : tallies) {
    total.calls += tally.calls;
    total.bytes += tally.bytes;
  }
  return total;
}

std::string callsAndBytes(const CallCounters::Tally& tally) {
  return std::to_string(tally.calls) + (tally.calls == 1 ? " call (" : " calls (") + std::to_string(tally.bytes) +
         " bytes)";
}

}  // namespace

CallCounters::Tally CallCounters::totalTaken() const { return sum(taken); }
CallCounters::Tally CallCounters::totalForwarded() const { return sum(forwarded); }

std::string describeCounters(const CallCounters& counters, int rank, int size, const std::string& why_none) {
  std::string line = "rank " + std::to_string(rank) + " of " + std::to_string(size) + ": took " +
                     callsAndBytes(counters.totalTaken()) + ", forwarded " + callsAndBytes(counters.totalForwarded());
  std::string kinds;
  for (int k = 0; k < kCallKindCount; ++k) {
    const auto i = static_cast<std::size_t>(k);
    if (counters.taken[i].calls == 0 && counters.forwarded[i].calls == 0) continue;
    kinds += (kinds.empty() ? "" : ", ") + std::string(callKindName(static_cast<CallKind>(k))) + " " +
             std::to_string(counters.taken[i].calls) + " taken / " + std::to_string(counters.forwarded[i].calls) +
             " forwarded";
  }
  if (!kinds.empty()) line += "; " + kinds;
  if (counters.taken_host.calls + counters.forwarded_host.calls != 0) {
    line += "; host time per call: taken " + hostTimeText(counters.taken_host) + ", forwarded " +
            hostTimeText(counters.forwarded_host);
  }
  if (!why_none.empty()) line += "; nothing taken: " + why_none;
  return line;
}

}  // namespace peerreduce::nccl
