// The one range of every link and device value a topology may hold: what a topology file may say is
// exactly what the communicator accepts at creation (lib/api/topology_agreement.cc), so a value is
// either refused while the file is parsed, naming it, or used.
#pragma once

namespace peerreduce {

inline constexpr double kMaxLatencyUs = 1e6;       // a second: anything slower is not a link
inline constexpr double kMinBandwidthGbps = 1e-3;  // a megabyte per second: anything slower is not a link
inline constexpr double kMaxBandwidthGbps = 1e6;   // a petabyte per second: far above any interconnect

// NaN is in no range.
inline bool latencyInRange(double us) { return us >= 0 && us <= kMaxLatencyUs; }
inline bool overheadInRange(double us) { return us > 0 && us <= kMaxLatencyUs; }
inline bool bandwidthInRange(double gbps) { return gbps >= kMinBandwidthGbps && gbps <= kMaxBandwidthGbps; }

// For messages.
inline constexpr const char* kLatencyRange = "0..1e6 us";
inline constexpr const char* kOverheadRange = "(0, 1e6] us";
inline constexpr const char* kBandwidthRange = "0.001..1e6 GB/s";

}  // namespace peerreduce
