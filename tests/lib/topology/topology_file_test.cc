// The topology description format (topology/topology_file.h): every keyword, every malformed line
// rejected with its line number and reason (the text is untrusted input), and format -> parse giving
// back the same topology.
#include "topology/topology_file.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "text_contains.h"
#include "topology/generators.h"

namespace peerreduce {
namespace {

using peerreduce::testing::contains;

constexpr const char* kHeader = "peerreduce-topology 1\nranks 4\n";

TEST(TopologyFile, CopyEngineFiguresParseAndRoundTrip) {
  auto topology = parseTopologyText(std::string(kHeader) + "device copy_engine_launch_us=0 copy_engine_gbps=390.5\n");
  ASSERT_TRUE(topology.isOk()) << topology.status().toString();
  EXPECT_EQ(topology->device().copy_engine_launch_us, 0.0);
  EXPECT_EQ(topology->device().copy_engine_gbps, 390.5);
  auto again = parseTopologyText(formatTopology(*topology));
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_EQ(again->device(), topology->device());
  auto defaults = parseTopologyText(kHeader);
  ASSERT_TRUE(defaults.isOk());
  EXPECT_EQ(defaults->device().copy_engine_gbps, DeviceModel{}.copy_engine_gbps) << "a file without them: defaults";
}

TEST(TopologyFile, ParsesEveryKeywordLaterLinesOverriding) {
  const std::string text =
      "# a comment line\n"
      "\n"
      "peerreduce-topology 1   # trailing comment\n"
      "ranks 4\r\n"
      "device step_overhead_us=0.25 signal_overhead_us=0.05 local_gbps=1000 ingress_gbps=300 launch_overhead_us=2.5\n"
      "default pcie 3 50\n"
      "link 0 1 nvlink 1.0 150\n"
      "link 2>3 xgmi 1.5 100\n"
      "nolink 1 2\n"
      "nolink 3>0\n"
      "\t link 3 1 host 8 20 \n";
  auto topology = parseTopologyText(text);
  ASSERT_TRUE(topology.isOk()) << topology.status().toString();
  EXPECT_EQ(topology->worldSize(), 4);
  EXPECT_EQ(topology->device().step_overhead_us, 0.25);
  EXPECT_EQ(topology->device().signal_overhead_us, 0.05);
  EXPECT_EQ(topology->device().local_bandwidth_gbps, 1000.0);
  EXPECT_EQ(topology->device().ingress_bandwidth_gbps, 300.0);
  EXPECT_EQ(topology->device().launch_overhead_us, 2.5);
  EXPECT_EQ(topology->link(0, 1), (LinkInfo{LinkClass::kNvLink, 1.0, 150.0}));
  EXPECT_EQ(topology->link(1, 0), (LinkInfo{LinkClass::kNvLink, 1.0, 150.0}));
  EXPECT_EQ(topology->link(2, 3), (LinkInfo{LinkClass::kXgmi, 1.5, 100.0}));
  EXPECT_EQ(topology->link(3, 2), (LinkInfo{LinkClass::kPcie, 3.0, 50.0})) << "one direction only";
  EXPECT_FALSE(topology->canAccess(1, 2));
  EXPECT_FALSE(topology->canAccess(2, 1));
  EXPECT_FALSE(topology->canAccess(3, 0));
  EXPECT_TRUE(topology->canAccess(0, 3));
  EXPECT_EQ(topology->link(1, 3).link_class, LinkClass::kHostStaged);
  EXPECT_EQ(topology->link(0, 2), (LinkInfo{LinkClass::kPcie, 3.0, 50.0}));
}

TEST(TopologyFile, MinimalFileHasNoLinksAndTheDefaultDevice) {
  auto topology = parseTopologyText(kHeader);
  ASSERT_TRUE(topology.isOk());
  EXPECT_TRUE(*topology == Topology(4));
}

// The launch overhead may be 0 (the default model has none), unlike the other device settings.
TEST(TopologyFile, LaunchOverheadMayBeZero) {
  auto topology =
      parseTopologyText(std::string(kHeader) + "device launch_overhead_us=3\ndevice launch_overhead_us=0\n");
  ASSERT_TRUE(topology.isOk()) << topology.status().toString();
  EXPECT_EQ(topology->device(), DeviceModel{});
}

TEST(TopologyFile, MalformedLinesAreRejectedWithTheirLineNumber) {
  const struct {
    std::string text;
    const char* says;
  } cases[] = {
      {"", "topology text is empty; it must start with 'peerreduce-topology 1'"},
      {"# only a comment\n", "topology text is empty"},
      {"peerreduce-topology 2\n", "topology line 1: the first line must be 'peerreduce-topology 1'"},
      {"ranks 4\n", "line 1: the first line must be"},
      {"peerreduce-topology 1 extra\n", "line 1: the first line must be"},
      {"peerreduce-topology 1\n", "topology text has no 'ranks N' line"},
      {"peerreduce-topology 1\nlink 0 1 nvlink 1 1\n", "line 2: 'ranks N' must come before 'link'"},
      {"peerreduce-topology 1\nranks 65\n", "line 2: ranks 65 is outside 1..64"},
      {"peerreduce-topology 1\nranks\n", "line 2: expected 'ranks N'"},
      {"peerreduce-topology 1\nranks 2\nranks 2\n", "line 3: ranks given twice"},
      {std::string(kHeader) + "links 0 1\n", "line 3: unknown keyword 'links' (ranks, device, default, link, nolink)"},
      {std::string(kHeader) + "device fast\n", "line 3: device settings are NAME=VALUE, got 'fast'"},
      {std::string(kHeader) + "device speed=3\n", "line 3: unknown device setting 'speed'"},
      {std::string(kHeader) + "device local_gbps=0\n", "line 3: local_gbps 0 is outside 0.001..1e6 GB/s"},
      {std::string(kHeader) + "device local_gbps=abc\n", "line 3: local_gbps 'abc' is not a decimal number"},
      {std::string(kHeader) + "device launch_overhead_us=-1\n", "line 3: launch_overhead_us -1 is outside 0..1e6 us"},
      {std::string(kHeader) + "device launch_overhead_us=2e6\n", "line 3: launch_overhead_us 2e6 is outside 0..1e6 us"},
      {std::string(kHeader) + "device launch_overhead_us=nan\n", "line 3: launch_overhead_us"},
      {std::string(kHeader) + "device copy_engine_launch_us=-2\n",
       "line 3: copy_engine_launch_us -2 is outside 0..1e6 us"},
      {std::string(kHeader) + "device copy_engine_gbps=0\n", "line 3: copy_engine_gbps 0 is outside 0.001..1e6 GB/s"},
      {std::string(kHeader) + "default nvlink 1\n", "line 3: expected CLASS LATENCY_US GBPS"},
      {std::string(kHeader) + "default fiber 1 1\n",
       "line 3: unknown link class 'fiber' (nvlink, xgmi, pcie, host, network)"},
      {std::string(kHeader) + "link 0 1 nvlink -1 10\n", "line 3: latency_us -1 is outside 0..1e6 us"},
      {std::string(kHeader) + "link 0 1 nvlink 2e6 10\n", "latency_us 2e6 is outside 0..1e6 us"},
      {std::string(kHeader) + "link 0 1 nvlink 1 0\n", "line 3: bandwidth 0 is outside 0.001..1e6 GB/s"},
      {std::string(kHeader) + "link 0 1 nvlink 1 1e7\n", "bandwidth 1e7 is outside 0.001..1e6 GB/s"},
      // One range with creation: values it would refuse are refused here, printed as given.
      {std::string(kHeader) + "default nvlink 1 1e-300\n", "line 3: bandwidth 1e-300 is outside 0.001..1e6 GB/s"},
      {std::string(kHeader) + "device local_gbps=1e-300\n", "line 3: local_gbps 1e-300 is outside 0.001..1e6 GB/s"},
      {std::string(kHeader) + "device step_overhead_us=0\n", "line 3: step_overhead_us 0 is outside (0, 1e6] us"},
      {std::string(kHeader) + "link 0 1 nvlink x 1\n", "latency_us 'x' is not a decimal number"},
      {std::string(kHeader) + "link 0 1 nvlink 1 inf\n", "bandwidth GB/s 'inf' is not a decimal number"},
      {std::string(kHeader) + "link\n", "line 3: expected ranks after 'link'"},
      {std::string(kHeader) + "link 0\n", "line 3: expected two ranks or A>B"},
      {std::string(kHeader) + "link 0 4 nvlink 1 1\n", "line 3: rank 4 is outside 0..3"},
      {std::string(kHeader) + "link 1 1 nvlink 1 1\n", "line 3: a link joins two different ranks"},
      {std::string(kHeader) + "link 0>x nvlink 1 1\n", "line 3: rank 'x' is not a whole number"},
      {std::string(kHeader) + "link >1 nvlink 1 1\n", "line 3: rank is empty"},
      {std::string(kHeader) + "nolink 0 1 nvlink\n", "line 3: nolink takes only the ranks"},
      {std::string(kHeader) + std::string(1025, ' ') + "\n", "line 3: longer than 1024 bytes"},
  };
  for (const auto& c : cases) {
    auto topology = parseTopologyText(c.text);
    ASSERT_FALSE(topology.isOk()) << c.text;
    EXPECT_EQ(topology.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(topology.status().message(), c.says)) << c.text << "\n-> " << topology.status().message();
  }
}

TEST(TopologyFile, TextAboveTheSizeLimitIsRejectedBeforeParsing) {
  const std::string huge = std::string(kHeader) + std::string(kMaxTopologyBytes, '\n');
  auto topology = parseTopologyText(huge);
  ASSERT_FALSE(topology.isOk());
  EXPECT_TRUE(contains(topology.status().message(), "exceeds the limit of 1048576")) << topology.status().message();
}

TEST(TopologyFile, LinkClassNames) {
  EXPECT_EQ(*parseLinkClass("nvlink"), LinkClass::kNvLink);
  EXPECT_EQ(*parseLinkClass("xgmi"), LinkClass::kXgmi);
  EXPECT_EQ(*parseLinkClass("pcie"), LinkClass::kPcie);
  EXPECT_EQ(*parseLinkClass("host"), LinkClass::kHostStaged);
  EXPECT_FALSE(parseLinkClass("none").isOk()) << "'none' is written as nolink";
  // A long bad name is cut in the message.
  EXPECT_LT(parseLinkClass(std::string(1000, 'z')).status().message().size(), 120u);
}

TEST(TopologyFile, LoadsFromAFileAndNamesThePathOnErrors) {
  const std::string path = ::testing::TempDir() + "peerreduce_topology_test.txt";
  {
    std::ofstream out(path);
    out << formatTopology(ringTopology(3));
  }
  auto loaded = loadTopologyFile(path);
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_TRUE(*loaded == ringTopology(3));
  {
    std::ofstream out(path);
    out << "peerreduce-topology 1\nranks 0\n";
  }
  auto bad = loadTopologyFile(path);
  ASSERT_FALSE(bad.isOk());
  EXPECT_TRUE(contains(bad.status().message(), "topology file '" + path + "': topology line 2"))
      << bad.status().message();
  std::remove(path.c_str());
  auto missing = loadTopologyFile(path);
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().message(), "cannot open topology file '" + path + "'");
}

// Formatting any topology (random links of every class, odd figures, a custom device) and parsing the
// text gives back exactly the same topology.
RC_GTEST_PROP(TopologyFileProperty, FormatThenParseGivesBackTheSameTopology, ()) {
  const int n = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(1, 12));
  Topology topology(n);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b || !*rc::gen::resize(rc::kNominalSize, rc::gen::arbitrary<bool>())) continue;
      LinkInfo link;
      link.link_class = static_cast<LinkClass>(*rc::gen::resize(rc::kNominalSize, rc::gen::inRange(1, 5)));
      link.latency_us = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, 1000000)) / 7.0;
      link.bandwidth_gbps = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(1, 1000000)) / 3.0;
      topology.setLink(a, b, link);
    }
  }
  DeviceModel device;
  device.step_overhead_us = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(1, 1000)) / 9.0;
  device.local_bandwidth_gbps = 1234.5678;
  device.launch_overhead_us = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, 1000)) / 7.0;
  topology.setDevice(device);
  auto parsed = parseTopologyText(formatTopology(topology));
  RC_ASSERT(parsed.isOk());
  RC_ASSERT(*parsed == topology);
}

}  // namespace
}  // namespace peerreduce
