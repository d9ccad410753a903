// Topology: which rank can reach which rank's memory directly, over what kind of link, how fast.
//
// Links are directional: link(a, b) describes rank a reading, writing or signalling rank b's memory.
// The numbers feed the alpha-beta cost model (time = latency + bytes / bandwidth) that both the
// algorithm selector and the simulator's virtual clock use, so the simulator predicts what the
// selector assumed.
//
// Thread safety: a Topology is a value; const access from several threads is safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace peerreduce {

enum class LinkClass : std::uint8_t {
  kNone = 0,        // no direct access
  kNvLink = 1,      // NVIDIA NVLink / NVSwitch
  kXgmi = 2,        // AMD Infinity Fabric
  kPcie = 3,        // peer-to-peer over PCIe
  kHostStaged = 4,  // through pinned host memory
  kNetwork = 5,     // between machines, through each rank's NIC (multi_machine.h)
};

std::string_view linkClassName(LinkClass link_class);

struct LinkInfo {
  LinkClass link_class = LinkClass::kNone;
  double latency_us = 0.0;      // one-way time for a signal or the first byte of a read
  double bandwidth_gbps = 0.0;  // GB/s (1e9 bytes per second) that one reader gets over this link

  bool connected() const { return link_class != LinkClass::kNone; }
  friend bool operator==(const LinkInfo&, const LinkInfo&) = default;
};

// Per-device costs that do not depend on the peer.
struct DeviceModel {
  double step_overhead_us = 0.5;          // fixed cost of one copy/reduce step (a kernel phase)
  double signal_overhead_us = 0.1;        // issuing one signal
  double local_bandwidth_gbps = 2000.0;   // copy/reduce bandwidth inside one device's memory
  double ingress_bandwidth_gbps = 450.0;  // all links into one device together
  // Fixed cost of starting one plan execution (a kernel launch, once per operation or segment): what
  // a GPU pays before any step however small the message. 0 in the simulator's default model, whose
  // traces and fingerprints are pinned; the calibrated profiles (topology/device_profiles.h) set it.
  double launch_overhead_us = 0.0;
  // A copy engine (Step::copy_engine): the fixed cost of one copy (its issue and start) and the rate of one
  // copy over one link, in either direction. Not calibrated: defaults until copy-engine plans are timed
  // on hardware (docs/PERF.md); topology files may set them (copy_engine_launch_us, copy_engine_gbps).
  double copy_engine_launch_us = 2.0;
  double copy_engine_gbps = 150.0;
  friend bool operator==(const DeviceModel&, const DeviceModel&) = default;
};

class Topology {
 public:
  Topology() = default;
  // `world_size` ranks, no links between them yet.
  explicit Topology(int world_size);

  // Every pair linked by `link`: what the simulator assumes unless told otherwise.
  static Topology fullMesh(int world_size, LinkInfo link = defaultNvLink(), DeviceModel device = {});
  // An NVLink-class link: the simulator's default until calibrated on hardware.
  static LinkInfo defaultNvLink();

  int worldSize() const { return world_size_; }
  const LinkInfo& link(int from, int to) const {
    return links_[static_cast<std::size_t>(from) * static_cast<std::size_t>(world_size_) +
                  static_cast<std::size_t>(to)];
  }
  void setLink(int from, int to, LinkInfo info);
  void setBidirectional(int a, int b, LinkInfo info) {
    setLink(a, b, info);
    setLink(b, a, info);
  }
  // True for a == b and for every connected link.
  bool canAccess(int from, int to) const { return from == to || link(from, to).connected(); }
  std::vector<std::vector<bool>> accessMatrix() const;
  // Whether any link between two different ranks is of `link_class` (kHostStaged: a world that reaches some
  // peer through pinned host memory).
  bool hasLinkOf(LinkClass link_class) const;

  const DeviceModel& device() const { return device_; }
  void setDevice(DeviceModel device) { device_ = device; }

  // "4 ranks, full mesh of nvlink (1.0 us, 150 GB/s)" or a list of the missing links.
  std::string describe() const;

  friend bool operator==(const Topology&, const Topology&) = default;

 private:
  int world_size_ = 0;
  std::vector<LinkInfo> links_;
  DeviceModel device_;
};

}  // namespace peerreduce
