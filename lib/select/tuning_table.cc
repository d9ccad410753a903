#include "select/tuning_table.h"

#include <algorithm>
#include <tuple>

#include "core/collective_algorithms.h"
#include "util/hash.h"
#include "util/parse.h"
#include "util/text_file.h"

namespace peerreduce {
namespace {

constexpr std::size_t kMaxArchChars = 32;

Status tuningLineError(int line, const std::string& what) {
  return invalidArgumentError("tuning table line " + std::to_string(line) + ": " + what);
}

constexpr const char* kEntryForms =
    "expected 'entry ARCH WORLD_SIZE MIN_BYTES MAX_BYTES ALGORITHM' (allreduce) or "
    "'entry COLLECTIVE ARCH WORLD_SIZE MIN_BYTES MAX_BYTES ALGORITHM'";

}  // namespace

bool validTableArch(std::string_view arch) {
  if (arch.empty() || arch.size() > kMaxArchChars) return false;
  return std::all_of(arch.begin(), arch.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

std::uint64_t tuningTableBytes(Collective collective, int world_size, std::uint64_t block_bytes) {
  if (collective != Collective::kReduceScatter && collective != Collective::kAllGather) return block_bytes;
  const auto ranks = static_cast<std::uint64_t>(world_size < 1 ? 1 : world_size);
  if (block_bytes > UINT64_MAX / ranks) return UINT64_MAX;
  return block_bytes * ranks;
}

StatusOr<TuningTable> TuningTable::parse(std::string_view text) {
  if (text.size() > kMaxTuningBytes) {
    return invalidArgumentError("tuning table of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                                std::to_string(kMaxTuningBytes));
  }
  TuningTable table;
  bool header = false;
  for (const auto& [line, words] : wordsByLine(text)) {
    if (!header) {
      if (words.size() != 2 || words[0] != "peerreduce-tuning" || words[1] != "1") {
        return tuningLineError(line, "the first line must be 'peerreduce-tuning 1'");
      }
      header = true;
      continue;
    }
    if (words[0] != "entry" || (words.size() != 6 && words.size() != 7)) return tuningLineError(line, kEntryForms);
    if (table.entries_.size() == kMaxTuningEntries) {
      return tuningLineError(line, "more than " + std::to_string(kMaxTuningEntries) + " entries");
    }
    TuningEntry entry;
    // Seven words name the collective first; six are allreduce's (the form every earlier table has).
    const std::size_t at = words.size() - 6;
    if (at == 1) {
      auto collective = parseCollective(words[1]);
      if (!collective.isOk()) return tuningLineError(line, collective.status().message());
      entry.collective = *collective;
    }
    entry.arch = words[at + 1];
    if (!validTableArch(entry.arch)) return tuningLineError(line, kTableArchRule);
    auto world = parseInt64(words[at + 2], 1, kMaxWorldSize, "world size");
    if (!world.isOk()) return tuningLineError(line, world.status().message());
    auto low = parseInt64(words[at + 3], 0, INT64_MAX, "min bytes");
    if (!low.isOk()) return tuningLineError(line, low.status().message());
    auto high = parseInt64(words[at + 4], 1, INT64_MAX, "max bytes");
    if (!high.isOk()) return tuningLineError(line, high.status().message());
    if (*high <= *low) return tuningLineError(line, "max bytes must be above min bytes");
    auto algorithm = parseAlgorithm(words[at + 5]);
    if (!algorithm.isOk()) return tuningLineError(line, algorithm.status().message());
    if (*algorithm == Algorithm::kAuto)
      return tuningLineError(line, "an entry must name a concrete algorithm, not auto");
    if (!anyCollectiveHasAlgorithm(entry.collective, *algorithm)) {
      // The selector would never find such a candidate: say so instead of ignoring the line.
      return tuningLineError(line, std::string(collectiveName(entry.collective)) + " has no " +
                                       std::string(algorithmName(*algorithm)) + " algorithm");
    }
    entry.world_size = static_cast<int>(*world);
    entry.min_bytes = static_cast<std::uint64_t>(*low);
    entry.max_bytes = static_cast<std::uint64_t>(*high);
    entry.algorithm = *algorithm;
    table.entries_.push_back(std::move(entry));
  }
  if (!header) return invalidArgumentError("tuning table is empty; it must start with 'peerreduce-tuning 1'");
  auto key = [](const TuningEntry& e) { return std::tie(e.collective, e.arch, e.world_size, e.min_bytes); };
  std::sort(table.entries_.begin(), table.entries_.end(),
            [&](const TuningEntry& a, const TuningEntry& b) { return key(a) < key(b); });
  for (std::size_t i = 1; i < table.entries_.size(); ++i) {
    const TuningEntry& a = table.entries_[i - 1];
    const TuningEntry& b = table.entries_[i];
    if (a.collective == b.collective && a.arch == b.arch && a.world_size == b.world_size && b.min_bytes < a.max_bytes) {
      const std::string whose =
          a.collective == Collective::kAllReduce ? "" : std::string(collectiveName(a.collective)) + " ";
      return invalidArgumentError("tuning table: " + whose + "entries for " + a.arch + " with " +
                                  std::to_string(a.world_size) + " ranks overlap at [" + std::to_string(b.min_bytes) +
                                  ", " + std::to_string(std::min(a.max_bytes, b.max_bytes)) + ")");
    }
  }
  Fnv1a hash;
  hash.addString(table.format());
  table.fingerprint_ = hash.value();
  return table;
}

StatusOr<TuningTable> TuningTable::load(const std::string& path) {
  PR_ASSIGN_OR_RETURN(const std::string text,
                      readTextFile(path, kMaxTuningBytes, "tuning table", "(PEERREDUCE_TUNING_FILE)"));
  auto table = parse(text);
  if (!table.isOk()) return table.status().withContext("tuning table '" + path + "'");
  return table;
}

std::optional<Algorithm> TuningTable::lookup(Collective collective, std::string_view arch, int world_size,
                                             std::uint64_t bytes) const {
  for (const TuningEntry& e : entries_) {  // at most kMaxTuningEntries
    if (e.collective == collective && e.arch == arch && e.world_size == world_size && bytes >= e.min_bytes &&
        bytes < e.max_bytes) {
      return e.algorithm;
    }
  }
  return std::nullopt;
}

std::string TuningTable::format() const {
  std::string out = "peerreduce-tuning 1\n";
  for (const TuningEntry& e : entries_) {
    out += "entry ";
    if (e.collective != Collective::kAllReduce) out += std::string(collectiveName(e.collective)) + " ";
    out += e.arch + " " + std::to_string(e.world_size) + " " + std::to_string(e.min_bytes) + " " +
           std::to_string(e.max_bytes) + " " + std::string(algorithmName(e.algorithm)) + "\n";
  }
  return out;
}

}  // namespace peerreduce
