#include "api/topology_agreement.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "bootstrap/rank_agreement.h"
#include "peerreduce/types.h"
#include "topology/generators.h"
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
  LinkEntry links[kMaxWorldSize];
};

}  // namespace

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
      !latencyInRange(first.launch_overhead_us)) {
    return corruptError("topology row from rank 0: device model out of range");
  }
  // The device model of rank 0 stands for all (a node's GPUs are alike; any choice just has to agree).
  agreed.topology.setDevice(DeviceModel{.step_overhead_us = first.step_overhead_us,
                                        .signal_overhead_us = first.signal_overhead_us,
                                        .local_bandwidth_gbps = first.local_bandwidth_gbps,
                                        .ingress_bandwidth_gbps = first.ingress_bandwidth_gbps,
                                        .launch_overhead_us = first.launch_overhead_us});
  agreed.architecture = first.architecture;
  auto masked = applyLinkMask(agreed.topology, config.link_mask);
  if (!masked.isOk()) return masked.status().withContext("PEERREDUCE_LINK_MASK");
  PR_RETURN_IF_ERROR(checkMaskKeepsConnected(agreed.topology, *masked, config.link_mask, "PEERREDUCE_LINK_MASK"));
  agreed.topology = std::move(masked).value();
  return agreed;
}

}  // namespace peerreduce
