#include "topology/generators.h"

#include <cmath>
#include <string_view>
#include <vector>

#include "peerreduce/types.h"
#include "util/parse.h"

namespace peerreduce {
namespace {

// splitmix64, local so the topology of a seed is the same on every platform (no <random>).
std::uint64_t mix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Status checkWorld(std::int64_t world_size) {
  if (world_size < 1 || world_size > kMaxWorldSize) {
    return invalidArgumentError("topology of " + std::to_string(world_size) + " ranks; supported sizes are 1.." +
                                std::to_string(kMaxWorldSize));
  }
  return Status::ok();
}

}  // namespace

LinkInfo defaultPcieLink() {
  // PCIe 5 x16 moves about 50 GB/s per direction in practice; a peer read costs a few microseconds.
  return LinkInfo{LinkClass::kPcie, 3.0, 50.0};
}

LinkInfo defaultHostStagedLink() {
  // Through pinned host memory: a write and a read over PCIe, plus a host-side flag round trip.
  return LinkInfo{LinkClass::kHostStaged, 8.0, 20.0};
}

Topology ringTopology(int world_size, LinkInfo link) {
  Topology topology(world_size);
  for (int r = 0; r < world_size && world_size > 1; ++r) topology.setBidirectional(r, (r + 1) % world_size, link);
  return topology;
}

StatusOr<Topology> mesh2dTopology(int rows, int cols, LinkInfo link) {
  if (rows < 1 || cols < 1) return invalidArgumentError("mesh2d needs at least 1 row and 1 column");
  // In 64 bits: the product of two ints cannot overflow it, while in int it could before the check.
  PR_RETURN_IF_ERROR(checkWorld(std::int64_t{rows} * cols));
  Topology topology(rows * cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const int here = r * cols + c;
      if (c + 1 < cols) topology.setBidirectional(here, here + 1, link);
      if (r + 1 < rows) topology.setBidirectional(here, here + cols, link);
    }
  }
  return topology;
}

StatusOr<Topology> pcieSwitchTopology(int world_size, int ranks_per_switch) {
  PR_RETURN_IF_ERROR(checkWorld(world_size));
  if (ranks_per_switch < 1) return invalidArgumentError("pcie:K needs K >= 1 ranks per switch");
  Topology topology(world_size);
  for (int a = 0; a < world_size; ++a) {
    for (int b = a + 1; b < world_size; ++b) {
      const bool same_switch = a / ranks_per_switch == b / ranks_per_switch;
      topology.setBidirectional(a, b, same_switch ? defaultPcieLink() : defaultHostStagedLink());
    }
  }
  return topology;
}

StatusOr<Topology> randomTopology(int world_size, double density, std::uint64_t seed, LinkInfo link) {
  PR_RETURN_IF_ERROR(checkWorld(world_size));
  if (!(density > 0.0 && density <= 1.0)) {
    return invalidArgumentError("random topology density " + std::to_string(density) + " is outside (0, 1]");
  }
  Topology topology(world_size);
  std::uint64_t state = seed;
  for (int a = 0; a < world_size; ++a) {
    for (int b = a + 1; b < world_size; ++b) {
      const double draw = static_cast<double>(mix(state) >> 11) * 0x1.0p-53;
      if (draw < density) topology.setBidirectional(a, b, link);
    }
  }
  return topology;
}

StatusOr<Topology> parseTopologySpec(const std::string& spec, int world_size) {
  const std::string accepted =
      "; accepted: full-mesh, ring, mesh2d:RxC, pcie:K, random:DENSITY[:SEED], or a topology file";
  PR_RETURN_IF_ERROR(checkWorld(world_size));
  const auto parts = splitString(spec, ':');
  const std::string& name = parts[0];
  auto expectParts = [&](std::size_t low, std::size_t high) -> Status {
    if (parts.size() < low || parts.size() > high) {
      return invalidArgumentError("topology '" + spec + "' has the wrong number of ':' parameters" + accepted);
    }
    return Status::ok();
  };
  if (name == "full-mesh") {
    PR_RETURN_IF_ERROR(expectParts(1, 1));
    return Topology::fullMesh(world_size);
  }
  if (name == "ring") {
    PR_RETURN_IF_ERROR(expectParts(1, 1));
    return ringTopology(world_size);
  }
  if (name == "mesh2d") {
    PR_RETURN_IF_ERROR(expectParts(2, 2));
    const auto dims = splitString(parts[1], 'x');
    if (dims.size() != 2) return invalidArgumentError("mesh2d needs RxC, got '" + parts[1] + "'" + accepted);
    PR_ASSIGN_OR_RETURN(std::int64_t rows, parseInt64(dims[0], 1, kMaxWorldSize, "mesh2d rows"));
    PR_ASSIGN_OR_RETURN(std::int64_t cols, parseInt64(dims[1], 1, kMaxWorldSize, "mesh2d columns"));
    if (rows * cols != world_size) {
      return invalidArgumentError("mesh2d:" + parts[1] + " has " + std::to_string(rows * cols) + " ranks, the world " +
                                  std::to_string(world_size));
    }
    return mesh2dTopology(static_cast<int>(rows), static_cast<int>(cols));
  }
  if (name == "pcie") {
    PR_RETURN_IF_ERROR(expectParts(2, 2));
    PR_ASSIGN_OR_RETURN(std::int64_t per_switch, parseInt64(parts[1], 1, kMaxWorldSize, "pcie ranks per switch"));
    return pcieSwitchTopology(world_size, static_cast<int>(per_switch));
  }
  if (name == "random") {
    PR_RETURN_IF_ERROR(expectParts(2, 3));
    PR_ASSIGN_OR_RETURN(double density, parseDouble(parts[1], "random topology density"));
    std::uint64_t seed = 1;
    if (parts.size() == 3) {
      PR_ASSIGN_OR_RETURN(std::int64_t s, parseInt64(parts[2], 0, INT64_MAX, "random topology seed"));
      seed = static_cast<std::uint64_t>(s);
    }
    return randomTopology(world_size, density, seed);
  }
  return invalidArgumentError("unknown topology '" + spec + "'" + accepted);
}

}  // namespace peerreduce
