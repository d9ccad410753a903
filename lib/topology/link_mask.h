// Applying a link mask (grammar: util/link_mask_syntax.h) to a topology.
//
// `A-B` removes the pair's links in both directions; `host:A-B` and `host:all` make pairs host-staged:
// a kHostStaged link in both directions, whether the pair had a direct link or none (every GPU of a
// host can reach pinned host memory, so staging needs no peer access). A host-staged pair keeps the
// figures of a host-staged link it already had (a topology file's measured ones); otherwise it gets
// `host_link`, the calibrated profile's host-staged figures where the architecture has them, else
// defaultHostStagedLink(). A pair both removed and named host-staged by a `host:A-B` entry is a
// contradiction (kInvalidArgument naming both entries); `host:all` yields to removals, so
// "host:all,0-1" is "no peer access, and 0 and 1 not linked at all".
//
// Every rank applies the same mask (the setting is part of the configuration fingerprint) to the same
// agreed matrix, so every rank gets the same links, classes and figures.
#pragma once

#include <string>

#include "peerreduce/status.h"
#include "peerreduce/topology.h"

namespace peerreduce {

// `topology` with `mask` applied; host-staged pairs that were not host-staged get `host_link` (its class
// must be kHostStaged). Ranks outside the world are kInvalidArgument naming the entry.
StatusOr<Topology> applyLinkMask(const Topology& topology, const std::string& mask, const LinkInfo& host_link);
// The same with defaultHostStagedLink() for new host-staged pairs.
StatusOr<Topology> applyLinkMask(const Topology& topology, const std::string& mask);

// The host-staged figures for a machine of `architecture`: its calibrated profile's where it has them,
// else defaultHostStagedLink().
LinkInfo hostStagedLinkFor(const std::string& architecture);

}  // namespace peerreduce
