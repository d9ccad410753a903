// The take table: where libpeerreduce_nccl.so's auto mode takes a collective, from measurements of
// peerreduce against NCCL on the same machine (docs/NCCL.md, "The take table").
//
//   # comments and blank lines are ignored
//   peerreduce-nccl-take 1                                   required first line
//   entry allreduce sm_90 4 fp32 0 16M peerreduce            collective, arch, world size, dtype class,
//   entry allreduce sm_90 4 fp32 16777217 256M nccl          bytes from, bytes to (both included), choice
//
// - collective: allreduce, reduce-scatter, all-gather, broadcast (ncclBcast is a broadcast);
// - arch: the device as peerreduce's communicator names it (its tuning-table key: "sm_90", "simulator");
// - dtype class: int8 (int8 and uint8: the same bytes move and the same adds run), int32, int64, fp16, bf16,
//   fp32, fp64, fp8 (fp8e4m3 and fp8e5m2: one byte each, the same conversions and rounding per step), or any
//   (every class that has no rows of its own);
// - bytes: the whole collective's buffer, nccl-tests' size (reduce-scatter's input and all-gather's output
//   hold nranks blocks), as a number or a byte size ("64K", "16M"); the range includes both ends, so a
//   row's upper bound is the largest size it covers, as PEERREDUCE_NCCL_MAX_BYTES is;
// - choice: peerreduce (measured faster by the margin) or nccl (measured slower, or within the margin).
//
// A (collective, arch, world size, dtype class) with rows is measured: a size no row covers is forwarded,
// since nothing says peerreduce wins there. One without rows is unmeasured; the take policy then applies
// its default (take_policy.h). Rows of one (collective, arch, world size, dtype class) may not overlap.
// The file is untrusted input: bounded (kMaxTakeTableBytes, kMaxTakeTableEntries), every field checked,
// errors (kInvalidArgument) name the line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce::nccl {

inline constexpr std::size_t kMaxTakeTableBytes = std::size_t{1} << 20;
// 4 collectives x 9 dtype classes x 64 world sizes x 2 rows, for one architecture.
inline constexpr std::size_t kMaxTakeTableEntries = 4608;

// The types whose speed a row speaks for. Signed and unsigned integers of one width share a class, and so
// do the two 8-bit floats.
enum class DtypeClass : int { kAny, kInt8, kInt32, kInt64, kFp16, kBf16, kFp32, kFp64, kFp8 };
std::string_view dtypeClassName(DtypeClass dtypes);
// The class of an NCCL data type value; nullopt for values that are no type.
std::optional<DtypeClass> dtypeClassOf(int nccl_dtype);

enum class TakeChoice : int { kPeerreduce, kNccl };

struct TakeEntry {
  Collective collective = Collective::kAllReduce;
  std::string arch;
  int world_size = 1;
  DtypeClass dtypes = DtypeClass::kAny;
  std::uint64_t min_bytes = 0;  // included
  std::uint64_t max_bytes = 0;  // included
  TakeChoice choice = TakeChoice::kNccl;
};

// The architecture a communicator looks its rows up under: its agreed architecture ("sm_90"), with
// kHostStagedSuffix where any pair of its agreed topology is host-staged ("sm_90-host"): the same GPUs without
// peer access run other paths, against NCCL's own host path, so the rows measured over NVLink do not speak
// for them (a host-staged world without rows of its own is unmeasured, take_policy.h).
inline constexpr std::string_view kHostStagedSuffix = "-host";
std::string takeTableArchitecture(std::string_view agreed_architecture, bool any_host_staged_link);

// What the table says of one call.
enum class TableAnswer : int {
  kUnmeasured,   // no rows for its collective, arch, world size and dtype class (nor `any`)
  kPeerreduce,   // a row measured peerreduce faster
  kNccl,         // a row measured NCCL faster, or peerreduce within the margin
  kOutsideRows,  // rows exist, none covers this size
};

class TakeTable {
 public:
  static StatusOr<TakeTable> parse(std::string_view text);
  // `setting` names where the path came from in errors ("PEERREDUCE_NCCL_TAKE_TABLE").
  static StatusOr<TakeTable> load(const std::string& path, std::string_view setting);

  // Rows of the call's own dtype class decide when there are any; else rows of `any`.
  TableAnswer lookup(Collective collective, std::string_view arch, int world_size, DtypeClass dtypes,
                     std::uint64_t bytes) const;
  // The rows of one architecture and world size (every lookup a communicator makes), so a call scans
  // only those.
  TakeTable narrowedTo(std::string_view arch, int world_size) const;

  const std::vector<TakeEntry>& entries() const { return entries_; }
  // Text that parses back to the same entries (sizes as numbers).
  std::string format() const;

 private:
  std::vector<TakeEntry> entries_;  // sorted by (collective, arch, world size, dtype class, min_bytes)
};

}  // namespace peerreduce::nccl
