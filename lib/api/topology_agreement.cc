#include "api/topology_agreement.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "bootstrap/rank_agreement.h"
#include "peerreduce/types.h"
#include "topology/generators.h"
#include "topology/link_mask.h"
#include "topology/link_ranges.h"
#include "topology/routes.h"

namespace peerreduce {
namespace {

constexpr std::size_t kArchitectureChars = 32;  // "sm_90", "gfx90a", "simulator": short device names

struct LinkEntry {
  std::uint8_t link_class;
  std::uint8_t reserved[7];
  double latency_us;
  double bandwidth_gbps;
};

// One rank's contribution: its row of the link matrix and its device model. Fixed size, so every
// rank sends the same number of bytes whatever the world size.
struct RowBlock {
  char architecture[kArchitectureChars];
  double step_overhead_us;
  double signal_overhead_us;
  double local_bandwidth_gbps;
  double ingress_bandwidth_gbps;
  double launch_overhead_us;
  double copy_engine_launch_us;
  double copy_engine_gbps;
  LinkEntry links[kMaxWorldSize];
};

}  // namespace

StatusOr<std::vector<std::uint8_t>> hostStagedPairs(const std::string& mask, int size) {
  const auto n = static_cast<std::size_t>(size);
  std::vector<std::uint8_t> forced(n * n, 0);
  if (mask.empty()) return forced;
  Topology mesh(size);
  for (int a = 0; a < size; ++a) {
    for (int b = a + 1; b < size; ++b) mesh.setBidirectional(a, b, Topology::defaultNvLink());
  }
  PR_ASSIGN_OR_RETURN(const Topology masked, applyLinkMask(mesh, mask));
  for (int a = 0; a < size; ++a) {
    for (int b = 0; b < size; ++b) {
      if (a != b && masked.link(a, b).link_class == LinkClass::kHostStaged) {
        forced[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)] = 1;
      }
    }
  }
  return forced;
}

StatusOr<AgreedTopology> agreeOnTopology(int rank, int size, const Topology& local, const std::string& architecture,
                                         Bootstrap& bootstrap, const Config& config) {
  RowBlock mine{};
  std::strncpy(mine.architecture, architecture.c_str(), kArchitectureChars - 1);
  const DeviceModel& device = local.device();
  mine.step_overhead_us = device.step_overhead_us;
  mine.signal_overhead_us = device.signal_overhead_us;
  mine.local_bandwidth_gbps = device.local_bandwidth_gbps;
  mine.ingress_bandwidth_gbps = device.ingress_bandwidth_gbps;
  mine.launch_overhead_us = device.launch_overhead_us;
  mine.copy_engine_launch_us = device.copy_engine_launch_us;
  mine.copy_engine_gbps = device.copy_engine_gbps;
  for (int peer = 0; peer < size; ++peer) {
    const LinkInfo& l = local.link(rank, peer);
    mine.links[peer] = LinkEntry{static_cast<std::uint8_t>(l.link_class), {}, l.latency_us, l.bandwidth_gbps};
  }
  PR_ASSIGN_OR_RETURN(const std::vector<RowBlock> rows,
                      RankAgreement(bootstrap, config.bootstrapTimeout()).gather(mine));

  AgreedTopology agreed;
  agreed.topology = Topology(size);
  for (int from = 0; from < size; ++from) {
    const RowBlock& row = rows[static_cast<std::size_t>(from)];
    const std::string who = "topology row from rank " + std::to_string(from) + ": ";
    if (row.architecture[kArchitectureChars - 1] != '\0') return corruptError(who + "architecture name not terminated");
    for (int to = 0; to < size; ++to) {
      const LinkEntry& e = row.links[to];
      if (e.link_class > static_cast<std::uint8_t>(LinkClass::kNetwork)) {
        return corruptError(who + "link to rank " + std::to_string(to) + " has class " + std::to_string(e.link_class));
      }
      const auto link_class = static_cast<LinkClass>(e.link_class);
      if (link_class != LinkClass::kNone && (!latencyInRange(e.latency_us) || !bandwidthInRange(e.bandwidth_gbps))) {
        return corruptError(who + "link to rank " + std::to_string(to) + " has latency " +
                            std::to_string(e.latency_us) + " us and bandwidth " + std::to_string(e.bandwidth_gbps) +
                            " GB/s");
      }
      if (from != to) agreed.topology.setLink(from, to, LinkInfo{link_class, e.latency_us, e.bandwidth_gbps});
    }
  }
  const RowBlock& first = rows.front();
  if (!overheadInRange(first.step_overhead_us) || !overheadInRange(first.signal_overhead_us) ||
      !bandwidthInRange(first.local_bandwidth_gbps) || !bandwidthInRange(first.ingress_bandwidth_gbps) ||
      !latencyInRange(first.launch_overhead_us) || !latencyInRange(first.copy_engine_launch_us) ||
      !bandwidthInRange(first.copy_engine_gbps)) {
    return corruptError("topology row from rank 0: device model out of range");
  }
  // The device model of rank 0 stands for all (a node's GPUs are alike; any choice just has to agree).
  agreed.topology.setDevice(DeviceModel{.step_overhead_us = first.step_overhead_us,
                                        .signal_overhead_us = first.signal_overhead_us,
                                        .local_bandwidth_gbps = first.local_bandwidth_gbps,
                                        .ingress_bandwidth_gbps = first.ingress_bandwidth_gbps,
                                        .launch_overhead_us = first.launch_overhead_us,
                                        .copy_engine_launch_us = first.copy_engine_launch_us,
                                        .copy_engine_gbps = first.copy_engine_gbps});
  agreed.architecture = first.architecture;
  // New host-staged pairs get the figures measured for this architecture, where there are any: every
  // rank knows rank 0's architecture, so every rank picks the same.
  auto masked = applyLinkMask(agreed.topology, config.link_mask, hostStagedLinkFor(agreed.architecture));
  if (!masked.isOk()) return masked.status().withContext("PEERREDUCE_LINK_MASK");
  PR_RETURN_IF_ERROR(checkMaskKeepsConnected(agreed.topology, *masked, config.link_mask, "PEERREDUCE_LINK_MASK"));
  agreed.topology = std::move(masked).value();
  return agreed;
}

Status adoptAgreedLinks(Transport& transport, int rank, const Topology& local, const Topology& agreed,
                        std::shared_ptr<PinnedHostPool> staging) {
  if (LinkAdoption* adoption = transport.capabilities().link_adoption) {
    return adoption->adoptLinks(agreed, std::move(staging));
  }
  for (int peer = 0; peer < agreed.worldSize(); ++peer) {
    if (peer == rank || agreed.link(rank, peer).link_class != LinkClass::kHostStaged ||
        local.link(rank, peer).link_class == LinkClass::kHostStaged) {
      continue;
    }
    return unsupportedError(transport.name() + " cannot stage the link " + std::to_string(rank) + "->" +
                            std::to_string(peer) +
                            " through host memory (it has no LinkAdoption); remove the host: entries of "
                            "PEERREDUCE_LINK_MASK or use a transport with host staging");
  }
  return Status::ok();
}

}  // namespace peerreduce
