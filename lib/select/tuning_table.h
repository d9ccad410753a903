// Tuning tables: measured algorithm choices that override the cost model where they apply.
//
//   # comments and blank lines are ignored
//   peerreduce-tuning 1                          required first line
//   entry h200 4 0 65536 one-shot                arch, world size, bytes from (inclusive), to (exclusive), algorithm
//   entry h200 4 65536 16777216 two-shot
// `arch` names the device as the transport reports it (e.g. "sm_90", "gfx90a", "simulator"). Ranges of
// one (arch, world size) may not overlap. Sizes not covered fall back to the cost model. The file is
// untrusted input: bounded (kMaxTuningBytes, kMaxTuningEntries), every field checked, errors name the
// line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce {

inline constexpr std::size_t kMaxTuningBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxTuningEntries = 4096;  // 64 world sizes x 64 size ranges

struct TuningEntry {
  std::string arch;
  int world_size = 1;
  std::uint64_t min_bytes = 0;  // inclusive
  std::uint64_t max_bytes = 0;  // exclusive
  Algorithm algorithm = Algorithm::kAuto;
};

class TuningTable {
 public:
  static StatusOr<TuningTable> parse(std::string_view text);
  static StatusOr<TuningTable> load(const std::string& path);

  // The algorithm measured best for this case, or nullopt if no entry covers it.
  std::optional<Algorithm> lookup(std::string_view arch, int world_size, std::uint64_t bytes) const;
  const std::vector<TuningEntry>& entries() const { return entries_; }
  std::string format() const;

 private:
  std::vector<TuningEntry> entries_;  // sorted by (arch, world size, min_bytes)
};

}  // namespace peerreduce
