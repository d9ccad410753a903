// Fuzzes the topology inputs: the topology file format (parseTopologyText), generator names
// (parseTopologySpec, from --topology) and link masks (applyLinkMask, PEERREDUCE_LINK_MASK and --mask).
// The first byte picks the parser; for specs and masks the second picks a world size in 0..65, so the
// limits on both sides of 1..64 are exercised. Oracles: an accepted file formats to text that parses
// back and formats to the same text; every accepted topology has the size asked for; a mask leaves
// every pair's two directions alike (removed together, host-staged together).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.h"
#include "peerreduce/types.h"
#include "topology/generators.h"
#include "topology/topology_file.h"

namespace {

using namespace peerreduce;

void checkText(const std::string& text) {
  auto topology = parseTopologyText(text);
  if (!topology.isOk()) return;
  const std::string formatted = formatTopology(*topology);
  auto again = parseTopologyText(formatted);
  if (!again.isOk()) fuzz::oracleFailed("a formatted topology does not parse back: " + again.status().toString());
  if (again->worldSize() != topology->worldSize()) fuzz::oracleFailed("the world size changed in a round trip");
  if (formatTopology(*again) != formatted) fuzz::oracleFailed("formatting a parsed topology is not stable");
  (void)topology->describe();
}

void checkSpec(const std::string& spec, int world_size) {
  auto topology = parseTopologySpec(spec, world_size);
  if (!topology.isOk()) return;
  if (topology->worldSize() != world_size) fuzz::oracleFailed("a generated topology has the wrong size");
  (void)topology->describe();
}

void checkMask(const std::string& mask, int world_size) {
  if (world_size < 1 || world_size > kMaxWorldSize) return;  // Topology::fullMesh's precondition
  const Topology full = Topology::fullMesh(world_size);
  auto masked = applyLinkMask(full, mask);
  if (!masked.isOk()) return;
  if (masked->worldSize() != world_size) fuzz::oracleFailed("a mask changed the world size");
  for (int a = 0; a < world_size; ++a) {
    for (int b = 0; b < world_size; ++b) {
      if (!(masked->link(a, b) == masked->link(b, a))) fuzz::oracleFailed("a mask is one-sided");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  peerreduce::fuzz::FuzzInput input(data, size);
  const int mode = input.byte() % 3;
  if (mode == 0) {
    checkText(input.rest());
    return 0;
  }
  const int world_size = input.intIn(0, peerreduce::kMaxWorldSize + 1);
  if (mode == 1) {
    checkSpec(input.rest(), world_size);
  } else {
    checkMask(input.rest(), world_size);
  }
  return 0;
}
