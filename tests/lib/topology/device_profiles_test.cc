// The calibrated profiles (topology/device_profiles.h): the h200 profile's numbers are the ones the fit
// wrote into the shipped topology files (docs/perf/h200-nvlink-{2,4}.topology, from
// bench/calibrate_model.py), lookups by name and by architecture find it, and unknown ones find nothing.
#include "topology/device_profiles.h"

#include <gtest/gtest.h>

#include <string>

#include "topology/topology_file.h"

namespace peerreduce {
namespace {

TEST(DeviceProfiles, H200IsWhatTheFitWrote) {
  const DeviceProfile* h200 = findDeviceProfile("h200");
  ASSERT_NE(h200, nullptr);
  for (int ranks : {2, 4}) {
    const std::string path =
        std::string(PEERREDUCE_SOURCE_DIR) + "/docs/perf/h200-nvlink-" + std::to_string(ranks) + ".topology";
    auto fitted = loadTopologyFile(path);
    ASSERT_TRUE(fitted.isOk()) << fitted.status().toString();
    EXPECT_TRUE(*fitted == profileFullMesh(*h200, ranks)) << path;
  }
  // The fit found a launch cost: the term the uncalibrated model lacked.
  EXPECT_GT(h200->device.launch_overhead_us, 0.0);
}

TEST(DeviceProfiles, LookupsByNameAndArchitecture) {
  EXPECT_EQ(profileForArchitecture("sm_90"), findDeviceProfile("h200"));
  EXPECT_EQ(findDeviceProfile("a100"), nullptr);
  EXPECT_EQ(findDeviceProfile(""), nullptr);
  EXPECT_EQ(profileForArchitecture("gfx90a"), nullptr);
  EXPECT_EQ(profileForArchitecture("simulator"), nullptr);
  for (const DeviceProfile& p : deviceProfiles()) {
    EXPECT_EQ(findDeviceProfile(p.name), &p);
    EXPECT_TRUE(p.link.connected()) << p.name;
  }
}

TEST(DeviceProfiles, FullMeshLinksEveryPairWithTheProfile) {
  const DeviceProfile& p = *findDeviceProfile("h200");
  const Topology t = profileFullMesh(p, 3);
  EXPECT_EQ(t.worldSize(), 3);
  EXPECT_EQ(t.device(), p.device);
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 3; ++b) {
      if (a != b) {
        EXPECT_EQ(t.link(a, b), p.link);
      }
    }
  }
}

}  // namespace
}  // namespace peerreduce
