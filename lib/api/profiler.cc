#include "api/profiler.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace peerreduce {
namespace {

double busFactor(int world_size) { return world_size > 1 ? 2.0 * (world_size - 1) / world_size : 0.0; }

// GB/s from bytes and microseconds.
double gbps(double bytes, double us) { return us > 0 ? bytes / us / 1e3 : 0.0; }

}  // namespace

StatusOr<std::unique_ptr<Profiler>> Profiler::create(std::size_t capacity, int world_size, Transport& transport) {
  if (capacity == 0 || capacity > kMaxProfileCapacity) {
    return invalidArgumentError("profiling capacity " + std::to_string(capacity) + " outside 1.." +
                                std::to_string(kMaxProfileCapacity) + " records");
  }
  TimeMarks* marks = transport.capabilities().time_marks;
  if (marks == nullptr) return unsupportedError(transport.name() + " cannot time operations (no time marks)");
  PR_RETURN_IF_ERROR(marks->reserveTimeMarks(2 * capacity));
  return std::unique_ptr<Profiler>(new Profiler(capacity, world_size, *marks));
}

void Profiler::begin(StreamHandle stream) {
  auto placed = marks_.markTime(2 * slot(), stream);
  begin_marked_ = placed.isOk() && *placed;
}

void Profiler::end(StreamHandle stream, const OperationProfile& what, bool submitted) {
  Entry& entry = entries_[slot()];
  entry.profile = what;
  entry.profile.sequence = next_;
  entry.profile.timed = false;
  entry.marked = false;
  if (submitted && begin_marked_) {
    auto placed = marks_.markTime(2 * slot() + 1, stream);
    entry.marked = placed.isOk() && *placed;
  }
  begin_marked_ = false;
  ++next_;
}

StatusOr<std::vector<OperationProfile>> Profiler::records() {
  const std::uint64_t held = std::min<std::uint64_t>(next_, entries_.size());
  std::vector<OperationProfile> out;
  out.reserve(static_cast<std::size_t>(held));
  for (std::uint64_t seq = next_ - held; seq < next_; ++seq) {
    const std::size_t s = static_cast<std::size_t>(seq % entries_.size());
    Entry& entry = entries_[s];
    if (entry.marked && !entry.profile.timed) {
      PR_ASSIGN_OR_RETURN(const std::optional<double> span, marks_.markedSpanUs(2 * s, 2 * s + 1));
      if (span.has_value()) {
        entry.profile.timed = true;
        entry.profile.duration_us = *span;
        entry.profile.algbw_gbps = gbps(static_cast<double>(entry.profile.bytes), *span);
        entry.profile.busbw_gbps = entry.profile.algbw_gbps * busFactor(world_size_);
      }
    }
    out.push_back(entry.profile);
  }
  return out;
}

StatusOr<ProfileSummary> Profiler::summary() {
  PR_ASSIGN_OR_RETURN(const std::vector<OperationProfile> all, records());
  ProfileSummary s;
  s.operations = all.size();
  s.dropped = next_ - all.size();
  std::vector<double> times;
  for (const OperationProfile& p : all) {
    if (!p.timed) continue;
    times.push_back(p.duration_us);
    s.bytes += p.bytes;
    s.total_us += p.duration_us;
    auto it = std::find_if(s.by_algorithm.begin(), s.by_algorithm.end(),
                           [&](const AlgorithmProfile& a) { return a.algorithm == p.algorithm; });
    if (it == s.by_algorithm.end()) {
      s.by_algorithm.push_back(AlgorithmProfile{p.algorithm, 0, 0, 0.0});
      it = s.by_algorithm.end() - 1;
    }
    it->operations += 1;
    it->bytes += p.bytes;
    it->total_us += p.duration_us;
  }
  s.timed = times.size();
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    s.min_us = times.front();
    s.max_us = times.back();
    s.median_us = times[times.size() / 2];
    s.busbw_gbps = gbps(static_cast<double>(s.bytes), s.total_us) * busFactor(world_size_);
  }
  std::sort(s.by_algorithm.begin(), s.by_algorithm.end(),
            [](const AlgorithmProfile& a, const AlgorithmProfile& b) { return a.algorithm < b.algorithm; });
  return s;
}

std::string describe(const ProfileSummary& s) {
  char line[256];
  std::string out;
  std::snprintf(line, sizeof(line), "profile: %llu operations held (%llu timed, %llu older dropped), %llu bytes\n",
                static_cast<unsigned long long>(s.operations), static_cast<unsigned long long>(s.timed),
                static_cast<unsigned long long>(s.dropped), static_cast<unsigned long long>(s.bytes));
  out += line;
  if (s.timed == 0) return out + "profile: no operation timed yet (synchronize first; captured ones are not timed)\n";
  std::snprintf(line, sizeof(line), "profile: time us total %.2f, min %.2f, median %.2f, max %.2f; busbw %.2f GB/s\n",
                s.total_us, s.min_us, s.median_us, s.max_us, s.busbw_gbps);
  out += line;
  for (const AlgorithmProfile& a : s.by_algorithm) {
    std::snprintf(line, sizeof(line), "profile:   %-20s %8llu ops %14llu bytes %12.2f us\n",
                  std::string(algorithmName(a.algorithm)).c_str(), static_cast<unsigned long long>(a.operations),
                  static_cast<unsigned long long>(a.bytes), a.total_us);
    out += line;
  }
  return out;
}

}  // namespace peerreduce
