// The grammar of a link mask (PEERREDUCE_LINK_MASK, Config::link_mask, peerreduce-sim --mask): what each
// comma-separated entry says, before anything knows the world size.
//
//   A-B         the pair's direct link is not used (removed in both directions)
//   host:A-B    the pair talks through pinned host memory: a host-staged link in both directions
//   host:all    every pair is host-staged (a machine without peer access), except pairs an A-B entry
//               removes
//
// Entries may be mixed ("0-1,host:2-3"). The grammar lives in util because the settings parser checks
// it when it reads the variable; topology/link_mask.h checks the ranks against the world and applies the
// entries to a topology.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "peerreduce/status.h"

namespace peerreduce {

struct LinkMaskEntry {
  enum class Kind : std::uint8_t {
    kRemove,         // A-B
    kHostStaged,     // host:A-B
    kHostStagedAll,  // host:all (a and b unused)
  };
  Kind kind = Kind::kRemove;
  int a = 0;
  int b = 0;
  std::string text;  // the entry as written, for messages
};

// The prefix of a host-staged entry and the word for every pair.
inline constexpr std::string_view kLinkMaskHostPrefix = "host:";
inline constexpr std::string_view kLinkMaskAllPairs = "all";

// The entries of `mask` in order; the empty mask has none. A malformed entry is kInvalidArgument naming it
// and the accepted forms; ranks must be 0..kMaxWorldSize-1 and distinct (the world's own bound is checked
// where the mask is applied).
StatusOr<std::vector<LinkMaskEntry>> parseLinkMaskSyntax(std::string_view mask);

}  // namespace peerreduce
