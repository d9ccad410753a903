#include "nccl/take_table.h"

#include <algorithm>
#include <array>
#include <tuple>

#include "nccl/nccl_values.h"
#include "select/tuning_table.h"
#include "util/parse.h"
#include "util/text_file.h"

namespace peerreduce::nccl {
namespace {

constexpr std::string_view kHeader = "peerreduce-nccl-take 1";
// Sizes stay below SIZE_MAX, which marks a collective whose size overflows (collective_call.h): no row
// can cover such a call, so it is never taken for a row's sake.
constexpr std::uint64_t kMaxRowBytes = static_cast<std::uint64_t>(INT64_MAX);

constexpr std::array<std::string_view, 9> kDtypeClassNames = {"any",  "int8", "int32", "int64", "fp16",
                                                              "bf16", "fp32", "fp64",  "fp8"};

constexpr const char* kEntryForm =
    "expected 'entry COLLECTIVE ARCH WORLD_SIZE DTYPE_CLASS MIN_BYTES MAX_BYTES peerreduce|nccl'";

Status lineError(int line, const std::string& what) {
  return invalidArgumentError("take table line " + std::to_string(line) + ": " + what);
}

StatusOr<DtypeClass> parseDtypeClass(const std::string& text) {
  for (std::size_t i = 0; i < kDtypeClassNames.size(); ++i) {
    if (kDtypeClassNames[i] == text) return static_cast<DtypeClass>(i);
  }
  return invalidArgumentError("unknown dtype class '" + text +
                              "'; expected any, int8, int32, int64, fp16, bf16, fp32, fp64 or fp8");
}

StatusOr<std::uint64_t> parseRowBytes(const std::string& text, const char* what) {
  auto bytes = parseByteSize(text);
  if (!bytes.isOk()) return invalidArgumentError(std::string(what) + ": " + bytes.status().message());
  if (*bytes > kMaxRowBytes) {
    return invalidArgumentError(std::string(what) + " " + text + " is above the largest size a row may name, " +
                                std::to_string(kMaxRowBytes));
  }
  return static_cast<std::uint64_t>(*bytes);
}

StatusOr<TakeChoice> parseChoice(const std::string& text) {
  if (text == "peerreduce") return TakeChoice::kPeerreduce;
  if (text == "nccl") return TakeChoice::kNccl;
  return invalidArgumentError("unknown choice '" + text + "'; expected peerreduce or nccl");
}

auto groupKey(const TakeEntry& e) { return std::tie(e.collective, e.arch, e.world_size, e.dtypes); }

bool sameGroup(const TakeEntry& a, const TakeEntry& b) { return groupKey(a) == groupKey(b); }

StatusOr<TakeEntry> parseEntry(const std::vector<std::string>& words, int line) {
  if (words.size() != 8) return lineError(line, kEntryForm);
  TakeEntry entry;
  auto collective = parseCollective(words[1]);
  if (!collective.isOk()) return lineError(line, collective.status().message());
  entry.collective = *collective;
  entry.arch = words[2];
  if (!validTableArch(entry.arch)) return lineError(line, kTableArchRule);
  auto world = parseInt64(words[3], 1, kMaxWorldSize, "world size");
  if (!world.isOk()) return lineError(line, world.status().message());
  entry.world_size = static_cast<int>(*world);
  auto dtypes = parseDtypeClass(words[4]);
  if (!dtypes.isOk()) return lineError(line, dtypes.status().message());
  entry.dtypes = *dtypes;
  auto low = parseRowBytes(words[5], "min bytes");
  if (!low.isOk()) return lineError(line, low.status().message());
  auto high = parseRowBytes(words[6], "max bytes");
  if (!high.isOk()) return lineError(line, high.status().message());
  if (*high < *low) return lineError(line, "max bytes must not be below min bytes (both are included)");
  entry.min_bytes = *low;
  entry.max_bytes = *high;
  auto choice = parseChoice(words[7]);
  if (!choice.isOk()) return lineError(line, choice.status().message());
  entry.choice = *choice;
  return entry;
}

}  // namespace

std::string_view dtypeClassName(DtypeClass dtypes) {
  const auto i = static_cast<std::size_t>(dtypes);
  return i < kDtypeClassNames.size() ? kDtypeClassNames[i] : "unknown";
}

std::optional<DtypeClass> dtypeClassOf(int nccl_dtype) {
  switch (static_cast<NcclDataType>(nccl_dtype)) {
    case NcclDataType::kInt8:
    case NcclDataType::kUint8:
      return DtypeClass::kInt8;
    case NcclDataType::kInt32:
    case NcclDataType::kUint32:
      return DtypeClass::kInt32;
    case NcclDataType::kInt64:
    case NcclDataType::kUint64:
      return DtypeClass::kInt64;
    case NcclDataType::kFloat16:
      return DtypeClass::kFp16;
    case NcclDataType::kBfloat16:
      return DtypeClass::kBf16;
    case NcclDataType::kFloat32:
      return DtypeClass::kFp32;
    case NcclDataType::kFloat64:
      return DtypeClass::kFp64;
    case NcclDataType::kFloat8e4m3:
    case NcclDataType::kFloat8e5m2:
      return DtypeClass::kFp8;
  }
  return std::nullopt;
}

StatusOr<TakeTable> TakeTable::parse(std::string_view text) {
  if (text.size() > kMaxTakeTableBytes) {
    return invalidArgumentError("take table of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                                std::to_string(kMaxTakeTableBytes));
  }
  TakeTable table;
  bool header = false;
  for (const auto& [line, words] : wordsByLine(text)) {  // bounded by the text's size
    if (!header) {
      if (words.size() != 2 || words[0] + " " + words[1] != kHeader) {
        return lineError(line, "the first line must be '" + std::string(kHeader) + "'");
      }
      header = true;
      continue;
    }
    if (words[0] != "entry") return lineError(line, kEntryForm);
    if (table.entries_.size() == kMaxTakeTableEntries) {
      return lineError(line, "more than " + std::to_string(kMaxTakeTableEntries) + " entries");
    }
    PR_ASSIGN_OR_RETURN(TakeEntry entry, parseEntry(words, line));
    table.entries_.push_back(std::move(entry));
  }
  if (!header) return invalidArgumentError("take table is empty; it must start with '" + std::string(kHeader) + "'");
  std::sort(table.entries_.begin(), table.entries_.end(), [](const TakeEntry& a, const TakeEntry& b) {
    return std::tuple_cat(groupKey(a), std::tie(a.min_bytes)) < std::tuple_cat(groupKey(b), std::tie(b.min_bytes));
  });
  for (std::size_t i = 1; i < table.entries_.size(); ++i) {
    const TakeEntry& a = table.entries_[i - 1];
    const TakeEntry& b = table.entries_[i];
    if (sameGroup(a, b) && b.min_bytes <= a.max_bytes) {
      return invalidArgumentError("take table: " + std::string(collectiveName(a.collective)) + " entries for " +
                                  a.arch + " with " + std::to_string(a.world_size) + " ranks and dtype class " +
                                  std::string(dtypeClassName(a.dtypes)) + " overlap at [" +
                                  std::to_string(b.min_bytes) + ", " +
                                  std::to_string(std::min(a.max_bytes, b.max_bytes)) + "]");
    }
  }
  return table;
}

StatusOr<TakeTable> TakeTable::load(const std::string& path, std::string_view setting) {
  PR_ASSIGN_OR_RETURN(const std::string text,
                      readTextFile(path, kMaxTakeTableBytes, "take table", "(" + std::string(setting) + ")"));
  auto table = parse(text);
  if (!table.isOk()) return table.status().withContext("take table '" + path + "' (" + std::string(setting) + ")");
  return table;
}

TableAnswer TakeTable::lookup(Collective collective, std::string_view arch, int world_size, DtypeClass dtypes,
                              std::uint64_t bytes) const {
  // The call's own class first; `any` speaks only for classes without rows of their own.
  for (const DtypeClass rows_of : {dtypes, DtypeClass::kAny}) {
    bool measured = false;
    for (const TakeEntry& e : entries_) {  // at most kMaxTakeTableEntries
      if (e.collective != collective || e.arch != arch || e.world_size != world_size || e.dtypes != rows_of) continue;
      measured = true;
      if (bytes >= e.min_bytes && bytes <= e.max_bytes) {
        return e.choice == TakeChoice::kPeerreduce ? TableAnswer::kPeerreduce : TableAnswer::kNccl;
      }
    }
    if (measured) return TableAnswer::kOutsideRows;
    if (dtypes == DtypeClass::kAny) break;
  }
  return TableAnswer::kUnmeasured;
}

std::string takeTableArchitecture(std::string_view agreed_architecture, bool any_host_staged_link) {
  std::string key(agreed_architecture);
  if (any_host_staged_link) key += kHostStagedSuffix;
  return key;
}

TakeTable TakeTable::narrowedTo(std::string_view arch, int world_size) const {
  TakeTable narrowed;
  for (const TakeEntry& e : entries_) {
    if (e.arch == arch && e.world_size == world_size) narrowed.entries_.push_back(e);
  }
  return narrowed;
}

std::string TakeTable::format() const {
  std::string out = std::string(kHeader) + "\n";
  for (const TakeEntry& e : entries_) {
    out += "entry " + std::string(collectiveName(e.collective)) + " " + e.arch + " " + std::to_string(e.world_size) +
           " " + std::string(dtypeClassName(e.dtypes)) + " " + std::to_string(e.min_bytes) + " " +
           std::to_string(e.max_bytes) + " " + (e.choice == TakeChoice::kPeerreduce ? "peerreduce" : "nccl") + "\n";
  }
  return out;
}

}  // namespace peerreduce::nccl
