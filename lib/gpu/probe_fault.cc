#include "gpu/probe_fault.h"

#include <string>

#include "util/link_mask_syntax.h"

namespace peerreduce::gpu {

StatusOr<std::vector<std::uint8_t>> parseProbeFaultPairs(std::string_view text, int world_size) {
  if (text.empty()) return std::vector<std::uint8_t>{};
  if (world_size < 1 || world_size > kMaxWorldSize) {
    return invalidArgumentError("probe fault pairs for a world of " + std::to_string(world_size));
  }
  const auto n = static_cast<std::size_t>(world_size);
  std::vector<std::uint8_t> pairs(n * n, 0);
  const std::string forms = " (accepted: 'all' or comma-separated A-B pairs of ranks, such as '0-1,2-3')";
  const std::string setting = "PEERREDUCE_GPU_FAULT_PROBE_PAIRS='" + std::string(text) + "': ";
  if (text == kProbeFaultAllPairs) {
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t b = 0; b < n; ++b) pairs[a * n + b] = a == b ? 0 : 1;
    }
    return pairs;
  }
  auto entries = parseLinkMaskSyntax(text);
  if (!entries.isOk()) return invalidArgumentError(setting + entries.status().message() + forms);
  for (const LinkMaskEntry& entry : *entries) {
    if (entry.kind != LinkMaskEntry::Kind::kRemove) {
      return invalidArgumentError(setting + "entry '" + entry.text + "' is not a pair" + forms);
    }
    if (entry.a >= world_size || entry.b >= world_size) {
      return invalidArgumentError(setting + "entry '" + entry.text + "' names a rank outside the world of " +
                                  std::to_string(world_size));
    }
    const auto a = static_cast<std::size_t>(entry.a);
    const auto b = static_cast<std::size_t>(entry.b);
    pairs[a * n + b] = pairs[b * n + a] = 1;
  }
  return pairs;
}

bool probeFaultStrikes(const std::vector<std::uint8_t>& pairs, int world_size, int rank, int peer, PeerPath path) {
  if (path != PeerPath::kDirect || rank == peer || rank < 0 || peer < 0 || rank >= world_size || peer >= world_size) {
    return false;
  }
  const auto n = static_cast<std::size_t>(world_size);
  return pairs.size() == n * n && pairs[static_cast<std::size_t>(rank) * n + static_cast<std::size_t>(peer)] != 0;
}

}  // namespace peerreduce::gpu
