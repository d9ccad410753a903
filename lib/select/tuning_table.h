// Tuning tables: measured algorithm choices that override the cost model where they apply.
//
//   # comments and blank lines are ignored
//   peerreduce-tuning 1                          required first line
//   entry h200 4 0 65536 one-shot                arch, world size, bytes from (inclusive), to (exclusive), algorithm
//   entry h200 4 65536 16777216 two-shot
//   entry reduce-scatter h200 4 0 1048576 one-shot   the same for another collective, named first
// An entry of six words is allreduce's (every table written before the collectives had tables keeps its
// meaning); an entry of seven names its collective ("allreduce", "reduce-scatter", "all-gather",
// "broadcast") after `entry`, and its algorithm must be one that collective has (`user`, the plan file of
// PEERREDUCE_PLAN_FILE, docs/PLANS.md, for any collective). Sizes are nccl-tests'
// size column (tuningTableBytes): allreduce and broadcast count x element size, reduce-scatter its send
// buffer and all-gather its receive buffer (count x ranks x element size), so a table is written from
// what peerreduce-bench reports. `arch` names the device as the transport reports it (e.g. "sm_90",
// "gfx90a", "simulator"). Ranges of one (collective, arch, world size) may not overlap. Sizes not covered
// fall back to the cost model. The file is untrusted input: bounded (kMaxTuningBytes, kMaxTuningEntries),
// every field checked, errors name the line.
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
  Collective collective = Collective::kAllReduce;
  std::string arch;
  int world_size = 1;
  std::uint64_t min_bytes = 0;  // inclusive
  std::uint64_t max_bytes = 0;  // exclusive
  Algorithm algorithm = Algorithm::kAuto;
};

// Whether `arch` can key a table's rows (this one's, and the NCCL library's take table): 1-32 letters, digits,
// '_', '-' or '.', as transports name their devices.
bool validTableArch(std::string_view arch);
inline constexpr const char* kTableArchRule = "arch must be 1-32 letters, digits, '_', '-' or '.'";

// The size a table entry's range is in for an operation of `block_bytes` per block (what the selector
// sees: count x element size): nccl-tests' size column, so block_bytes x world_size for reduce-scatter
// and all-gather, block_bytes for allreduce and broadcast. Saturates instead of wrapping.
std::uint64_t tuningTableBytes(Collective collective, int world_size, std::uint64_t block_bytes);

class TuningTable {
 public:
  static StatusOr<TuningTable> parse(std::string_view text);
  static StatusOr<TuningTable> load(const std::string& path);

  // The algorithm measured best for this case, or nullopt if no entry covers it. `bytes` is in the
  // table's units (tuningTableBytes). Without a collective: allreduce.
  std::optional<Algorithm> lookup(Collective collective, std::string_view arch, int world_size,
                                  std::uint64_t bytes) const;
  std::optional<Algorithm> lookup(std::string_view arch, int world_size, std::uint64_t bytes) const {
    return lookup(Collective::kAllReduce, arch, world_size, bytes);
  }
  const std::vector<TuningEntry>& entries() const { return entries_; }
  // Allreduce's entries in the six-word form, first (so a table of allreduce entries formats as it did
  // before collectives had tables, and hashes the same), then the others with their collective.
  std::string format() const;
  // The FNV-1a hash of format(), computed once when the table is parsed: every communicator's creation
  // compares it across ranks and keys its selectors with it, and formatting the table each time was a
  // twentieth of a simulated world's creation. 0 for a table that was not parsed (no entries).
  std::uint64_t fingerprint() const { return fingerprint_; }

 private:
  std::vector<TuningEntry> entries_;  // sorted by (collective, arch, world size, min_bytes)
  std::uint64_t fingerprint_ = 0;
};

}  // namespace peerreduce
