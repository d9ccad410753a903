// Topology generators for the simulator and the tests: the shapes partial connectivity takes.
//
//   full-mesh          every pair linked (NVSwitch, or 4-8 GPUs all-to-all over NVLink / XGMI)
//   ring               each rank linked to its two neighbours only
//   mesh2d:RxC         an R x C grid, each rank linked to up to four neighbours
//   pcie:K             groups of K ranks behind one PCIe switch (fast peer-to-peer inside a group);
//                      between groups only host-staged links through pinned memory
//   random:D[:SEED]    each pair linked with probability D (0 < D <= 1); may be disconnected
// All links are symmetric. Names are parsed by parseTopologySpec; files by topology_file.h.
#pragma once

#include <cstdint>
#include <string>

#include "peerreduce/status.h"
#include "peerreduce/topology.h"
// applyLinkMask, which callers of the generators have always found here.
#include "topology/link_mask.h"

namespace peerreduce {

// A PCIe peer-to-peer link between GPUs under one switch (illustrative: about a PCIe 5 x16 link).
LinkInfo defaultPcieLink();
// A host-staged link: peer data travels through pinned host memory (two PCIe crossings).
LinkInfo defaultHostStagedLink();

Topology ringTopology(int world_size, LinkInfo link = Topology::defaultNvLink());
StatusOr<Topology> mesh2dTopology(int rows, int cols, LinkInfo link = Topology::defaultNvLink());
StatusOr<Topology> pcieSwitchTopology(int world_size, int ranks_per_switch);
StatusOr<Topology> randomTopology(int world_size, double density, std::uint64_t seed,
                                  LinkInfo link = Topology::defaultNvLink());

// "full-mesh", "ring", "mesh2d:2x4", "pcie:4", "random:0.5:7" for `world_size` ranks. An unknown
// name or bad parameter is kInvalidArgument listing the accepted forms.
StatusOr<Topology> parseTopologySpec(const std::string& spec, int world_size);

}  // namespace peerreduce
