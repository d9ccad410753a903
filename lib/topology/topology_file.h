// The topology description format: links between ranks written down in a text file.
//
//   # comments and blank lines are ignored
//   peerreduce-topology 1                      required first line: format and version
//   ranks 4                                    required, 1..64, before any link line
//   device step_overhead_us=0.5 signal_overhead_us=0.1 local_gbps=2000 ingress_gbps=450 launch_overhead_us=0
//          copy_engine_launch_us=2 copy_engine_gbps=150   (one line) optional, any subset of the settings
//   default nvlink 1.0 150                     optional: every pair gets this link (class latency_us GB/s)
//   link 0 1 nvlink 1.0 150                    a link in both directions
//   link 0>1 pcie 3.0 50                       one direction: rank 0 reaches rank 1's memory
//   nolink 2 3                                 no link in either direction (nolink 2>3: one direction)
// Classes: nvlink, xgmi, pcie, host (host-staged through pinned memory), network (between machines). Later lines
// override earlier ones. Latency in microseconds, 0..1e6; bandwidth in GB/s, 0.001..1e6; device overheads in (0, 1e6]
// us, except launch_overhead_us (the fixed cost of one plan execution) and copy_engine_launch_us (one copy-engine
// copy's), which may be 0; copy_engine_gbps is a bandwidth.
//
// The text is untrusted input (it comes from users and is fuzzed): sizes are bounded (kMaxTopologyBytes,
// kMaxTopologyLineBytes), every number is range-checked, and every error is kInvalidArgument naming
// the line number and what was wrong.
#pragma once

#include <string>
#include <string_view>

#include "peerreduce/status.h"
#include "peerreduce/topology.h"

namespace peerreduce {

inline constexpr std::size_t kMaxTopologyBytes = std::size_t{1} << 20;  // a full 64-rank file is ~250 KiB
inline constexpr std::size_t kMaxTopologyLineBytes = 1024;

StatusOr<Topology> parseTopologyText(std::string_view text);
StatusOr<Topology> loadTopologyFile(const std::string& path);
// Writes `topology` in the format above, one line per directed link; parseTopologyText gives it back.
std::string formatTopology(const Topology& topology);

StatusOr<LinkClass> parseLinkClass(std::string_view name);

}  // namespace peerreduce
