#include "select/timing_model.h"

#include <algorithm>

namespace peerreduce {
namespace {
// GB/s to bytes per microsecond: 1e9 bytes/s = 1e3 bytes/us.
constexpr double kBytesPerUsPerGbps = 1e3;
}  // namespace

TimingModel::TimingModel(const Topology& topology)
    : topology_(topology),
      scratch_bytes_(static_cast<std::size_t>(topology.worldSize()), 0) {}

double TimingModel::dataStepUs(int rank, const RankProgram& program, const Step& step, const ChunkLayout& layout,
                               std::size_t elem_size, std::vector<std::uint64_t>* link_bytes) const {
  const std::uint64_t bytes = static_cast<std::uint64_t>(layout.size(step.chunk)) * elem_size;
  if (bytes == 0) return 0.0;
  std::fill(scratch_bytes_.begin(), scratch_bytes_.end(), 0);
  auto touch = [&](const BufferRef& ref) { scratch_bytes_[static_cast<std::size_t>(ref.rank)] += bytes; };
  for (std::uint32_t i = 0; i < step.src_count; ++i) touch(program.sources[step.src_begin + i]);
  touch(step.dst);

  const int n = topology_.worldSize();
  const DeviceModel& device = topology_.device();
  double slowest_link = 0.0;
  std::uint64_t remote = 0;
  for (int peer = 0; peer < n; ++peer) {
    const std::uint64_t b = scratch_bytes_[static_cast<std::size_t>(peer)];
    if (b == 0) continue;
    if (link_bytes != nullptr) (*link_bytes)[static_cast<std::size_t>(rank) * static_cast<std::size_t>(n) + static_cast<std::size_t>(peer)] += b;
    if (peer == rank) continue;
    remote += b;
    const LinkInfo& link = topology_.link(rank, peer);
    const double bandwidth = std::max(link.bandwidth_gbps, 1e-9) * kBytesPerUsPerGbps;
    slowest_link = std::max(slowest_link, link.latency_us + static_cast<double>(b) / bandwidth);
  }
  const double local = static_cast<double>(scratch_bytes_[static_cast<std::size_t>(rank)]) /
                       (device.local_bandwidth_gbps * kBytesPerUsPerGbps);
  const double ingress = static_cast<double>(remote) / (device.ingress_bandwidth_gbps * kBytesPerUsPerGbps);
  return device.step_overhead_us + std::max({slowest_link, ingress, local});
}

}  // namespace peerreduce
