#include "gpu/calibrated_model.h"

#include "topology/device_profiles.h"

namespace peerreduce::gpu {

LinkInfo modelLink(std::string_view architecture) {
  if (const DeviceProfile* profile = profileForArchitecture(architecture)) return profile->link;
  return LinkInfo{LinkClass::kNvLink, 1.0, 150.0};  // uncalibrated: peer access over NVLink / XGMI
}

DeviceModel modelDevice(std::string_view architecture) {
  if (const DeviceProfile* profile = profileForArchitecture(architecture)) return profile->device;
  return DeviceModel{};
}

}  // namespace peerreduce::gpu
