#include "topology/link_mask.h"

#include <map>
#include <utility>
#include <vector>

#include "topology/device_profiles.h"
#include "topology/generators.h"
#include "util/link_mask_syntax.h"

namespace peerreduce {
namespace {

using Pair = std::pair<int, int>;

Pair ordered(int a, int b) { return a < b ? Pair{a, b} : Pair{b, a}; }

Status checkInWorld(const LinkMaskEntry& entry, int world_size) {
  for (int rank : {entry.a, entry.b}) {
    if (rank >= world_size) {
      return invalidArgumentError("link mask rank " + std::to_string(rank) + " is outside 0.." +
                                  std::to_string(world_size - 1) + " (entry '" + entry.text + "')");
    }
  }
  return Status::ok();
}

}  // namespace

StatusOr<Topology> applyLinkMask(const Topology& topology, const std::string& mask, const LinkInfo& host_link) {
  if (host_link.link_class != LinkClass::kHostStaged) {
    return invalidArgumentError("host-staged link figures of class '" +
                                std::string(linkClassName(host_link.link_class)) + "'; expected 'host'");
  }
  PR_ASSIGN_OR_RETURN(const std::vector<LinkMaskEntry> entries, parseLinkMaskSyntax(mask));
  const int n = topology.worldSize();
  std::map<Pair, const LinkMaskEntry*> removed;
  std::map<Pair, const LinkMaskEntry*> hosted;
  bool host_all = false;
  for (const LinkMaskEntry& entry : entries) {
    if (entry.kind == LinkMaskEntry::Kind::kHostStagedAll) {
      host_all = true;
      continue;
    }
    PR_RETURN_IF_ERROR(checkInWorld(entry, n));
    const Pair pair = ordered(entry.a, entry.b);
    auto& mine = entry.kind == LinkMaskEntry::Kind::kRemove ? removed : hosted;
    const auto& other = entry.kind == LinkMaskEntry::Kind::kRemove ? hosted : removed;
    if (auto clash = other.find(pair); clash != other.end()) {
      return invalidArgumentError("link mask entries '" + clash->second->text + "' and '" + entry.text +
                                  "' both name the pair " + std::to_string(pair.first) + "-" +
                                  std::to_string(pair.second) + ": one removes it, the other makes it host-staged");
    }
    mine.emplace(pair, &entry);
  }

  Topology masked = topology;
  auto stage = [&](int a, int b) {
    const bool already = topology.link(a, b).link_class == LinkClass::kHostStaged &&
                         topology.link(b, a).link_class == LinkClass::kHostStaged;
    if (already) return;  // keep the figures the topology has for it
    masked.setBidirectional(a, b, host_link);
  };
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const Pair pair{a, b};
      if (removed.contains(pair)) {
        masked.setBidirectional(a, b, LinkInfo{});
      } else if (host_all || hosted.contains(pair)) {
        stage(a, b);
      }
    }
  }
  return masked;
}

StatusOr<Topology> applyLinkMask(const Topology& topology, const std::string& mask) {
  return applyLinkMask(topology, mask, defaultHostStagedLink());
}

LinkInfo hostStagedLinkFor(const std::string& architecture) {
  const DeviceProfile* profile = profileForArchitecture(architecture);
  if (profile != nullptr && profile->host_link.link_class == LinkClass::kHostStaged) return profile->host_link;
  return defaultHostStagedLink();
}

}  // namespace peerreduce
