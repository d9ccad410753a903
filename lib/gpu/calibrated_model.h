// The cost model's parameters for a GPU communicator, so its selector and `explainSelection` predict
// with fitted numbers on the GPUs peerreduce was measured on and with the illustrative defaults
// elsewhere. Host-only, so it is unit-tested without a GPU (tests/lib/calibrated_model_test.cc).
//
// The fitted numbers live in one place, the calibrated profiles (topology/device_profiles.h; sm_90:
// the "h200" profile, fitted by bench/calibrate_model.py on 4 x H200), which the simulator's
// `predict --device` reads as well.
#pragma once

#include <string_view>

#include "peerreduce/topology.h"

namespace peerreduce::gpu {

// The link to every peer and the device model for a GPU of `architecture` ("sm_90", "gfx90a", ...):
// the profile's where one was measured, else an illustrative NVLink-class link and the default model.
LinkInfo modelLink(std::string_view architecture);
DeviceModel modelDevice(std::string_view architecture);

}  // namespace peerreduce::gpu
