#include "topology/device_profiles.h"

#include <array>

namespace peerreduce {
namespace {

// 4 x H200 with NV18 between every pair (H100 shares the architecture and the NVLink generation), fitted
// to 23 fp32 times of 2 and 4 ranks, one-shot and two-shot, 4 KiB .. 256 MiB
// (docs/perf/h200x4-lines2/model-points.csv); rms error of log(predicted / measured) 0.183. Link
// latency and bandwidth and local bandwidth sit at the fit's bounds (0.05 us, 1000 GB/s, 10 TB/s): the
// GPU's kernels hide per-peer costs, so the ingress rate and the fixed costs carry the time.
constexpr std::array kProfiles{
    DeviceProfile{"h200", "sm_90", LinkInfo{LinkClass::kNvLink, 0.05, 1000.0},
                  DeviceModel{.step_overhead_us = 1.0,
                              .signal_overhead_us = 0.243,
                              .local_bandwidth_gbps = 1e4,
                              .ingress_bandwidth_gbps = 245.4,
                              .launch_overhead_us = 0.6771}},
};

}  // namespace

std::span<const DeviceProfile> deviceProfiles() { return kProfiles; }

const DeviceProfile* findDeviceProfile(std::string_view name) {
  for (const DeviceProfile& p : kProfiles) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const DeviceProfile* profileForArchitecture(std::string_view architecture) {
  for (const DeviceProfile& p : kProfiles) {
    if (p.architecture == architecture) return &p;
  }
  return nullptr;
}

Topology profileFullMesh(const DeviceProfile& profile, int world_size) {
  return Topology::fullMesh(world_size, profile.link, profile.device);
}

}  // namespace peerreduce
