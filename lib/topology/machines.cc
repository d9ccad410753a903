// The network between machines as a topology: see machines.h.
#include "topology/machines.h"

#include <charconv>
#include <string_view>

namespace peerreduce {

LinkInfo networkLink(double gbit_per_s, double latency_us) {
  return LinkInfo{LinkClass::kNetwork, latency_us, gbit_per_s / 8.0};
}

Topology networkTopology(int machines, LinkInfo link) {
  DeviceModel device;
  device.ingress_bandwidth_gbps = link.bandwidth_gbps;  // one NIC carries everything a rank receives
  return Topology::fullMesh(machines, link, device);
}

namespace {

// A number with an optional unit suffix (case-insensitive), e.g. "400", "400g", "5us".
bool parseNumber(std::string_view text, std::string_view suffix, double& out) {
  if (text.size() >= suffix.size()) {
    bool has_suffix = !suffix.empty();
    for (std::size_t i = 0; i < suffix.size() && has_suffix; ++i) {
      const char c = text[text.size() - suffix.size() + i];
      has_suffix = (c | 0x20) == suffix[i];
    }
    if (has_suffix) text.remove_suffix(suffix.size());
  }
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

StatusOr<LinkInfo> parseNetworkSpec(const std::string& spec) {
  const std::string_view text(spec);
  const std::size_t colon = text.find(':');
  const std::string_view rate = text.substr(0, colon);
  const std::string_view latency = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  double gbit = 0.0;
  double latency_us = kDefaultNetworkLatencyUs;
  const bool ok = parseNumber(rate, "g", gbit) && gbit >= 1.0 && gbit <= 100000.0 &&
                  (colon == std::string_view::npos ||
                   (parseNumber(latency, "us", latency_us) && latency_us >= 0.0 && latency_us <= 1e6));
  if (!ok) {
    return invalidArgumentError("network '" + spec.substr(0, 64) +
                                "': expected GBIT[:LATENCY_US], e.g. 400 or 400:5 (1..100000 Gb/s per NIC, "
                                "0..1000000 us one way)");
  }
  return networkLink(gbit, latency_us);
}

}  // namespace peerreduce
