// The access-probe fault setting (PEERREDUCE_GPU_FAULT_PROBE_PAIRS): the probe of a named pair's device
// mapping fails as on a machine whose peer-to-peer path is broken (some PCIe switches, VMs, containers),
// so the fallback to host-staged links (docs/ARCHITECTURE.md, GPU backend) runs on any GPU, ranks sharing
// one device included. Host-only, unit-tested (tests/lib/gpu/probe_fault_test.cc).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "gpu/host_staging.h"
#include "peerreduce/status.h"

namespace peerreduce::gpu {

// The word for every pair.
inline constexpr std::string_view kProbeFaultAllPairs = "all";

// The pairs `text` names in a world of `world_size`: "all", or comma-separated "A-B" entries (the link
// mask's pair form); world x world, row-major, symmetric; empty text names none (an empty matrix).
// kInvalidArgument naming the setting, the entry and the accepted forms otherwise (a rank outside the
// world, "host:" entries, a rank paired with itself).
StatusOr<std::vector<std::uint8_t>> parseProbeFaultPairs(std::string_view text, int world_size);

// Whether the fault (`pairs`, world_size x world_size; empty: none) fails `rank`'s probe of `peer` over
// `path`: the pair is named and the path is direct.
// A host-mapped path (the fallback) passes, so the second exchange connects.
bool probeFaultStrikes(const std::vector<std::uint8_t>& pairs, int world_size, int rank, int peer, PeerPath path);

}  // namespace peerreduce::gpu
