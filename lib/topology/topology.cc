#include "peerreduce/topology.h"

#include <cstdio>

namespace peerreduce {

std::string_view linkClassName(LinkClass link_class) {
  switch (link_class) {
    case LinkClass::kNone:
      return "none";
    case LinkClass::kNvLink:
      return "nvlink";
    case LinkClass::kXgmi:
      return "xgmi";
    case LinkClass::kPcie:
      return "pcie";
    case LinkClass::kHostStaged:
      return "host";
    case LinkClass::kNetwork:
      return "network";
  }
  return "invalid";
}

Topology::Topology(int world_size)
    : world_size_(world_size), links_(static_cast<std::size_t>(world_size) * static_cast<std::size_t>(world_size)) {}

LinkInfo Topology::defaultNvLink() {
  // Illustrative NVLink-class figures (a 4-GPU full mesh gives each pair about a third of one GPU's
  // ~450 GB/s); docs/PERF.md records the calibrated values measured on hardware.
  LinkInfo link;
  link.link_class = LinkClass::kNvLink;
  link.latency_us = 1.0;
  link.bandwidth_gbps = 150.0;
  return link;
}

Topology Topology::fullMesh(int world_size, LinkInfo link, DeviceModel device) {
  Topology topology(world_size);
  for (int a = 0; a < world_size; ++a) {
    for (int b = 0; b < world_size; ++b) {
      if (a != b) topology.setLink(a, b, link);
    }
  }
  topology.setDevice(device);
  return topology;
}

void Topology::setLink(int from, int to, LinkInfo info) {
  links_[static_cast<std::size_t>(from) * static_cast<std::size_t>(world_size_) + static_cast<std::size_t>(to)] = info;
}

bool Topology::hasLinkOf(LinkClass link_class) const {
  for (int a = 0; a < world_size_; ++a) {
    for (int b = 0; b < world_size_; ++b) {
      if (a != b && link(a, b).link_class == link_class) return true;
    }
  }
  return false;
}

std::vector<std::vector<bool>> Topology::accessMatrix() const {
  std::vector<std::vector<bool>> matrix(static_cast<std::size_t>(world_size_),
                                        std::vector<bool>(static_cast<std::size_t>(world_size_), false));
  for (int a = 0; a < world_size_; ++a) {
    for (int b = 0; b < world_size_; ++b)
      matrix[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = canAccess(a, b);
  }
  return matrix;
}

std::string Topology::describe() const {
  std::string out = std::to_string(world_size_) + " ranks";
  std::string missing;
  int missing_count = 0;
  bool uniform = true;
  const LinkInfo* first = nullptr;
  for (int a = 0; a < world_size_; ++a) {
    for (int b = 0; b < world_size_; ++b) {
      if (a == b) continue;
      const LinkInfo& l = link(a, b);
      if (!l.connected()) {
        if (missing_count++ < 8) missing += (missing.empty() ? "" : ",") + std::to_string(a) + "-" + std::to_string(b);
        continue;
      }
      if (first == nullptr) first = &l;
      uniform = uniform && l.link_class == first->link_class && l.latency_us == first->latency_us &&
                l.bandwidth_gbps == first->bandwidth_gbps;
    }
  }
  char buf[128];
  if (first != nullptr) {
    std::snprintf(buf, sizeof(buf), ", %s%s (%.2f us, %.0f GB/s)", missing_count ? "links of " : "full mesh of ",
                  std::string(linkClassName(first->link_class)).c_str(), first->latency_us, first->bandwidth_gbps);
    out += buf;
    if (!uniform) out += " and others";
  }
  if (missing_count) {
    out += ", " + std::to_string(missing_count) + " directed links missing (" + missing +
           (missing_count > 8 ? ",..." : "") + ")";
  }
  return out;
}

}  // namespace peerreduce
