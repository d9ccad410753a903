// The cost model's parameters for the GPUs peerreduce was measured on, so a GPU communicator's selector
// and `explainSelection` predict with fitted numbers rather than illustrative ones. Host-only, so it
// is unit-tested without a GPU (tests/lib/calibrated_model_test.cc checks these values against the
// shipped topology files).
//
// sm_90 (H100 / H200 over NVLink): fitted by bench/calibrate_model.py to 23 measured times on 4 x H200
// (2 and 4 ranks, one-shot and two-shot, 4 KiB .. 256 MiB; docs/perf/h200x4-lines2/model-points.csv),
// rms error of log(predicted / measured) 0.19. They are effective parameters of the model, not link
// figures: the model prices plan steps, while the GPU runs its own kernels (lines, push), and the
// fit puts the bandwidth limit in the ingress term (245 GB/s) and makes the per-peer link nearly free.
#pragma once

#include <string_view>

#include "peerreduce/topology.h"

namespace peerreduce::gpu {

inline constexpr LinkInfo kH200NvLink{LinkClass::kNvLink, 0.2847, 917.0};
inline constexpr DeviceModel kH200Device{1.091, 0.2594, 1e4, 245.4};

// The link to every peer and the device model for a GPU of `architecture` ("sm_90", "gfx90a", ...):
// the fitted ones where there are any, else an illustrative NVLink-class link and the default model.
LinkInfo modelLink(std::string_view architecture);
DeviceModel modelDevice(std::string_view architecture);

}  // namespace peerreduce::gpu
