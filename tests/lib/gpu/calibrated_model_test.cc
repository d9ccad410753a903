// The cost model's fitted parameters for sm_90 (gpu/calibrated_model.h) are the ones in the topology
// files the fit wrote (docs/perf/h200-nvlink-{2,4}.topology, from bench/calibrate_model.py), and other
// devices keep the uncalibrated defaults.
#include "gpu/calibrated_model.h"

#include <gtest/gtest.h>

#include <string>

#include "topology/topology_file.h"

namespace peerreduce::gpu {
namespace {

TEST(CalibratedModel, Sm90UsesTheParametersTheFitWrote) {
  for (int ranks : {2, 4}) {
    const std::string path =
        std::string(PEERREDUCE_SOURCE_DIR) + "/docs/perf/h200-nvlink-" + std::to_string(ranks) + ".topology";
    auto fitted = loadTopologyFile(path);
    ASSERT_TRUE(fitted.isOk()) << fitted.status().toString();
    EXPECT_EQ(fitted->device(), modelDevice("sm_90")) << path;
    EXPECT_EQ(fitted->link(0, 1), modelLink("sm_90")) << path;
    EXPECT_EQ(fitted->link(ranks - 1, 0), modelLink("sm_90")) << path;
  }
}

TEST(CalibratedModel, OtherDevicesKeepTheDefaults) {
  for (const char* arch : {"gfx90a", "sm_80", "unknown"}) {
    EXPECT_EQ(modelDevice(arch), DeviceModel{}) << arch;
    const LinkInfo link = modelLink(arch);
    EXPECT_EQ(link.link_class, LinkClass::kNvLink);
    EXPECT_EQ(link.latency_us, 1.0);
    EXPECT_EQ(link.bandwidth_gbps, 150.0);
  }
}

}  // namespace
}  // namespace peerreduce::gpu
