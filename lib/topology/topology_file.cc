#include "topology/topology_file.h"

#include <cstdio>
#include <sstream>
#include <vector>

#include "peerreduce/types.h"
#include "topology/link_ranges.h"
#include "util/parse.h"
#include "util/text_file.h"

namespace peerreduce {
namespace {

struct Endpoints {
  int from = 0;
  int to = 0;
  bool both = true;
};

Status topologyLineError(int line, const std::string& what) {
  return invalidArgumentError("topology line " + std::to_string(line) + ": " + what);
}

StatusOr<Endpoints> parseEndpoints(const std::vector<std::string>& words, std::size_t& index, int ranks, int line) {
  Endpoints e;
  auto rank = [&](const std::string& text) -> StatusOr<int> {
    auto v = parseInt64(text, 0, ranks - 1, "rank");
    if (!v.isOk()) return topologyLineError(line, v.status().message());
    return static_cast<int>(*v);
  };
  const std::string& first = words[index];
  if (const auto arrow = first.find('>'); arrow != std::string::npos) {
    PR_ASSIGN_OR_RETURN(e.from, rank(first.substr(0, arrow)));
    PR_ASSIGN_OR_RETURN(e.to, rank(first.substr(arrow + 1)));
    e.both = false;
    index += 1;
  } else {
    if (index + 1 >= words.size()) return topologyLineError(line, "expected two ranks or A>B");
    PR_ASSIGN_OR_RETURN(e.from, rank(first));
    PR_ASSIGN_OR_RETURN(e.to, rank(words[index + 1]));
    index += 2;
  }
  if (e.from == e.to) return topologyLineError(line, "a link joins two different ranks");
  return e;
}

StatusOr<LinkInfo> parseLink(const std::vector<std::string>& words, std::size_t index, int line) {
  if (words.size() != index + 3) return topologyLineError(line, "expected CLASS LATENCY_US GBPS");
  auto link_class = parseLinkClass(words[index]);
  if (!link_class.isOk()) return topologyLineError(line, link_class.status().message());
  auto latency = parseDouble(words[index + 1], "latency_us");
  if (!latency.isOk()) return topologyLineError(line, latency.status().message());
  auto gbps = parseDouble(words[index + 2], "bandwidth GB/s");
  if (!gbps.isOk()) return topologyLineError(line, gbps.status().message());
  if (!latencyInRange(*latency)) {
    return topologyLineError(line, "latency_us " + words[index + 1] + " is outside " + kLatencyRange);
  }
  if (!bandwidthInRange(*gbps)) {
    return topologyLineError(line, "bandwidth " + words[index + 2] + " is outside " + kBandwidthRange);
  }
  return LinkInfo{*link_class, *latency, *gbps};
}

Status parseDevice(const std::vector<std::string>& words, DeviceModel& device, int line) {
  for (std::size_t i = 1; i < words.size(); ++i) {
    const auto eq = words[i].find('=');
    if (eq == std::string::npos)
      return topologyLineError(line, "device settings are NAME=VALUE, got '" + words[i] + "'");
    const std::string name = words[i].substr(0, eq);
    const std::string given = words[i].substr(eq + 1);
    auto value = parseDouble(given, name.c_str());
    if (!value.isOk()) return topologyLineError(line, value.status().message());
    if (name == "copy_engine_launch_us") {
      if (!latencyInRange(*value)) return topologyLineError(line, name + " " + given + " is outside " + kLatencyRange);
      device.copy_engine_launch_us = *value;
      continue;
    }
    if (name == "launch_overhead_us") {
      // 0 is the simulator's default (no launch cost); the other settings divide or are never 0.
      if (!latencyInRange(*value)) return topologyLineError(line, name + " " + given + " is outside " + kLatencyRange);
      device.launch_overhead_us = *value;
      continue;
    }
    const bool is_bandwidth = name == "local_gbps" || name == "ingress_gbps" || name == "copy_engine_gbps";
    if (is_bandwidth ? !bandwidthInRange(*value) : !overheadInRange(*value)) {
      return topologyLineError(line,
                               name + " " + given + " is outside " + (is_bandwidth ? kBandwidthRange : kOverheadRange));
    }
    if (name == "step_overhead_us") {
      device.step_overhead_us = *value;
    } else if (name == "signal_overhead_us") {
      device.signal_overhead_us = *value;
    } else if (name == "local_gbps") {
      device.local_bandwidth_gbps = *value;
    } else if (name == "ingress_gbps") {
      device.ingress_bandwidth_gbps = *value;
    } else if (name == "copy_engine_gbps") {
      device.copy_engine_gbps = *value;
    } else {
      return topologyLineError(
          line, "unknown device setting '" + name +
                    "' (step_overhead_us, signal_overhead_us, local_gbps, ingress_gbps, launch_overhead_us, "
                    "copy_engine_launch_us, copy_engine_gbps)");
    }
  }
  return Status::ok();
}

}  // namespace

StatusOr<LinkClass> parseLinkClass(std::string_view name) {
  if (name == "nvlink") return LinkClass::kNvLink;
  if (name == "xgmi") return LinkClass::kXgmi;
  if (name == "pcie") return LinkClass::kPcie;
  if (name == "host") return LinkClass::kHostStaged;
  if (name == "network") return LinkClass::kNetwork;
  return invalidArgumentError("unknown link class '" + std::string(name.substr(0, 32)) +
                              "' (nvlink, xgmi, pcie, host, network)");
}

StatusOr<Topology> parseTopologyText(std::string_view text) {
  if (text.size() > kMaxTopologyBytes) {
    return invalidArgumentError("topology text of " + std::to_string(text.size()) + " bytes exceeds the limit of " +
                                std::to_string(kMaxTopologyBytes));
  }
  const auto lines = splitString(text, '\n');
  bool header = false;
  int ranks = 0;
  Topology topology;
  DeviceModel device;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const int line = static_cast<int>(i) + 1;
    std::string content = lines[i];
    if (content.size() > kMaxTopologyLineBytes) {
      return topologyLineError(line, "longer than " + std::to_string(kMaxTopologyLineBytes) + " bytes");
    }
    if (const auto hash = content.find('#'); hash != std::string::npos) content.resize(hash);
    if (!content.empty() && content.back() == '\r') content.pop_back();
    const auto words = splitWords(content);
    if (words.empty()) continue;
    const std::string& keyword = words[0];
    if (!header) {
      if (keyword != "peerreduce-topology" || words.size() != 2 || words[1] != "1") {
        return topologyLineError(line, "the first line must be 'peerreduce-topology 1'");
      }
      header = true;
      continue;
    }
    if (keyword == "ranks") {
      if (ranks != 0) return topologyLineError(line, "ranks given twice");
      if (words.size() != 2) return topologyLineError(line, "expected 'ranks N'");
      auto n = parseInt64(words[1], 1, kMaxWorldSize, "ranks");
      if (!n.isOk()) return topologyLineError(line, n.status().message());
      ranks = static_cast<int>(*n);
      topology = Topology(ranks);
      continue;
    }
    if (ranks == 0) return topologyLineError(line, "'ranks N' must come before '" + keyword + "'");
    if (keyword == "device") {
      PR_RETURN_IF_ERROR(parseDevice(words, device, line));
    } else if (keyword == "default") {
      PR_ASSIGN_OR_RETURN(LinkInfo link, parseLink(words, 1, line));
      for (int a = 0; a < ranks; ++a) {
        for (int b = 0; b < ranks; ++b) {
          if (a != b) topology.setLink(a, b, link);
        }
      }
    } else if (keyword == "link" || keyword == "nolink") {
      if (words.size() < 2) return topologyLineError(line, "expected ranks after '" + keyword + "'");
      std::size_t index = 1;
      PR_ASSIGN_OR_RETURN(Endpoints ends, parseEndpoints(words, index, ranks, line));
      LinkInfo link;
      if (keyword == "link") {
        PR_ASSIGN_OR_RETURN(link, parseLink(words, index, line));
      } else if (index != words.size()) {
        return topologyLineError(line, "nolink takes only the ranks");
      }
      topology.setLink(ends.from, ends.to, link);
      if (ends.both) topology.setLink(ends.to, ends.from, link);
    } else {
      return topologyLineError(
          line, "unknown keyword '" + keyword.substr(0, 32) + "' (ranks, device, default, link, nolink)");
    }
  }
  if (!header) return invalidArgumentError("topology text is empty; it must start with 'peerreduce-topology 1'");
  if (ranks == 0) return invalidArgumentError("topology text has no 'ranks N' line");
  topology.setDevice(device);
  return topology;
}

StatusOr<Topology> loadTopologyFile(const std::string& path) {
  PR_ASSIGN_OR_RETURN(const std::string text, readTextFile(path, kMaxTopologyBytes, "topology file"));
  auto topology = parseTopologyText(text);
  if (!topology.isOk()) return topology.status().withContext("topology file '" + path + "'");
  return topology;
}

std::string formatTopology(const Topology& topology) {
  std::ostringstream out;
  out.precision(17);
  const DeviceModel& d = topology.device();
  out << "peerreduce-topology 1\nranks " << topology.worldSize() << "\n";
  out << "device step_overhead_us=" << d.step_overhead_us << " signal_overhead_us=" << d.signal_overhead_us
      << " local_gbps=" << d.local_bandwidth_gbps << " ingress_gbps=" << d.ingress_bandwidth_gbps
      << " launch_overhead_us=" << d.launch_overhead_us << " copy_engine_launch_us=" << d.copy_engine_launch_us
      << " copy_engine_gbps=" << d.copy_engine_gbps << "\n";
  for (int a = 0; a < topology.worldSize(); ++a) {
    for (int b = 0; b < topology.worldSize(); ++b) {
      const LinkInfo& l = topology.link(a, b);
      if (a == b || !l.connected()) continue;
      out << "link " << a << ">" << b << " " << linkClassName(l.link_class) << " " << l.latency_us << " "
          << l.bandwidth_gbps << "\n";
    }
  }
  return out.str();
}

}  // namespace peerreduce
