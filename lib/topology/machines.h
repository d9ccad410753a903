// The network between machines as a topology: what a network world (peerreduce/multi_machine.h) of M
// machines looks like to the cost model and to the simulator.
//
// Each rank of a network world is one NIC: links to every other machine of class kNetwork with the
// NIC's latency and bandwidth, and the device's ingress bandwidth equal to the NIC's, so reading from
// several machines at once shares one NIC (sending is not limited separately).
#pragma once

#include <string>

#include "peerreduce/status.h"
#include "peerreduce/topology.h"

namespace peerreduce {

// A NIC of `gbit_per_s` gigabits per second (400: 50 GB/s) with `latency_us` one way (defaults: 400 Gb/s,
// 5 us, about an RDMA message through one switch plus the host's share of a send and a receive).
inline constexpr double kDefaultNetworkGbitPerS = 400.0;
inline constexpr double kDefaultNetworkLatencyUs = 5.0;
LinkInfo networkLink(double gbit_per_s = kDefaultNetworkGbitPerS, double latency_us = kDefaultNetworkLatencyUs);

// Every pair of `machines` linked by `link`; ingress bandwidth = the link's (one NIC per rank).
Topology networkTopology(int machines, LinkInfo link = networkLink());

// "400" (Gb/s), "400:5" (Gb/s : one-way latency in us), "200g:3us". kInvalidArgument naming the text
// and the accepted form when malformed or out of range (1..100000 Gb/s, 0..1e6 us).
StatusOr<LinkInfo> parseNetworkSpec(const std::string& spec);

}  // namespace peerreduce
