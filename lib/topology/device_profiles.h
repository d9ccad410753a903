// Calibrated cost-model profiles: the link and device figures fitted to allreduce times measured on
// real machines (bench/calibrate_model.py), so GPU communicators and `peerreduce-sim predict --device`
// price plans with measured numbers instead of the simulator's illustrative defaults.
//
// A profile holds effective parameters of the model, not raw link figures: the model prices plan
// steps, while the GPU runs its own kernels, so the fit places costs where the model's terms can
// express them (docs/PERF.md, "Cost model, calibrated"). The same numbers ship as topology files
// (docs/perf/h200-nvlink-{2,4}.topology); tests/lib/device_profiles_test.cc keeps the two equal.
#pragma once

#include <span>
#include <string_view>

#include "peerreduce/topology.h"

namespace peerreduce {

struct DeviceProfile {
  std::string_view name;          // what `--device` takes: "h200"
  std::string_view architecture;  // the GPU architecture it stands for: "sm_90"
  LinkInfo link;                  // every peer link of the full mesh it was measured on
  DeviceModel device;
  // Host-staged figures (peer data through pinned host memory) measured on this machine; class kNone
  // where never measured, and host-staged pairs then get defaultHostStagedLink().
  LinkInfo host_link{};
};

// Every profile the library ships.
std::span<const DeviceProfile> deviceProfiles();
// The profile called `name`, or null.
const DeviceProfile* findDeviceProfile(std::string_view name);
// The profile measured on GPUs of `architecture` ("sm_90"), or null for architectures never measured.
const DeviceProfile* profileForArchitecture(std::string_view architecture);
// `world_size` ranks, every pair linked by the profile's link, with its device model.
Topology profileFullMesh(const DeviceProfile& profile, int world_size);

}  // namespace peerreduce
