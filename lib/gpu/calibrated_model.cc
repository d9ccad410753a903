#include "gpu/calibrated_model.h"

namespace peerreduce::gpu {

LinkInfo modelLink(std::string_view architecture) {
  if (architecture == "sm_90") return kH200NvLink;
  return LinkInfo{LinkClass::kNvLink, 1.0, 150.0};  // uncalibrated: peer access over NVLink / XGMI
}

DeviceModel modelDevice(std::string_view architecture) {
  if (architecture == "sm_90") return kH200Device;
  return DeviceModel{};
}

}  // namespace peerreduce::gpu
