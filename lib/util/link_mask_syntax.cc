#include "util/link_mask_syntax.h"

#include "peerreduce/types.h"
#include "util/parse.h"

namespace peerreduce {
namespace {

constexpr const char* kAccepted = " is not A-B, host:A-B or host:all (e.g. 0-1,host:2-3)";

StatusOr<int> parseRank(const std::string& text) {
  PR_ASSIGN_OR_RETURN(std::int64_t rank, parseInt64(text, 0, kMaxWorldSize - 1, "link mask rank"));
  return static_cast<int>(rank);
}

// Longest entry text a message repeats: a mask may be 16 KiB of one malformed entry.
constexpr std::size_t kMaxShownEntryChars = 64;

StatusOr<LinkMaskEntry> parseEntry(const std::string& whole) {
  LinkMaskEntry parsed;
  parsed.text = whole.size() > kMaxShownEntryChars ? whole.substr(0, kMaxShownEntryChars) + "..." : whole;
  const std::string& entry = parsed.text;
  std::string_view pair = whole;
  if (pair.starts_with(kLinkMaskHostPrefix)) {
    pair.remove_prefix(kLinkMaskHostPrefix.size());
    if (pair == kLinkMaskAllPairs) {
      parsed.kind = LinkMaskEntry::Kind::kHostStagedAll;
      return parsed;
    }
    parsed.kind = LinkMaskEntry::Kind::kHostStaged;
  }
  const auto ends = splitString(pair, '-');
  if (ends.size() != 2) return invalidArgumentError("link mask entry '" + entry + "'" + kAccepted);
  auto a = parseRank(ends[0]);
  if (!a.isOk()) return a.status().withContext("link mask entry '" + entry + "'");
  auto b = parseRank(ends[1]);
  if (!b.isOk()) return b.status().withContext("link mask entry '" + entry + "'");
  if (*a == *b) return invalidArgumentError("link mask entry '" + entry + "' names one rank twice");
  parsed.a = *a;
  parsed.b = *b;
  return parsed;
}

}  // namespace

StatusOr<std::vector<LinkMaskEntry>> parseLinkMaskSyntax(std::string_view mask) {
  std::vector<LinkMaskEntry> entries;
  if (mask.empty()) return entries;
  for (const std::string& entry : splitString(mask, ',')) {
    PR_ASSIGN_OR_RETURN(LinkMaskEntry parsed, parseEntry(entry));
    entries.push_back(std::move(parsed));
  }
  return entries;
}

}  // namespace peerreduce
