// Agreeing on the topology at communicator creation.
//
// Each rank knows its own outgoing links best (on GPUs, from its own access probe), so each sends its
// row of the link matrix and its device model through the bootstrap, and every rank assembles the same
// matrix from the rows (row r from rank r). Then the configured link mask removes the pairs it names,
// and a world the remaining links do not connect (directly or through relays) is refused with a typed
// error naming the unreachable ranks. Everything received is validated: a malformed row is kCorrupt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "peerreduce/config.h"
#include "peerreduce/topology.h"
#include "peerreduce/transport.h"

namespace peerreduce {

struct AgreedTopology {
  Topology topology;         // the assembled matrix, masked
  std::string architecture;  // rank 0's device architecture, for tuning-table lookups
};

// The pairs a link mask makes host-staged ("host:A-B" entries), world x world row-major (1: forced),
// for transports that must place memory before the topology is agreed (HostStaging). Read by applying
// the mask to a full mesh, so the mask has one parser; kInvalidArgument as applyLinkMask gives it.
StatusOr<std::vector<std::uint8_t>> hostStagedPairs(const std::string& mask, int size);

// Hands `agreed` and the communicator's pinned pool to the transport (LinkAdoption). A transport without
// that capability is fine unless the agreement made host-staged a link of `rank` that the transport's own
// topology `local` did not have as host-staged: then kUnsupported naming the transport and the link.
Status adoptAgreedLinks(Transport& transport, int rank, const Topology& local, const Topology& agreed,
                        std::shared_ptr<PinnedHostPool> staging);

StatusOr<AgreedTopology> agreeOnTopology(int rank, int size, const Topology& local, const std::string& architecture,
                                         Bootstrap& bootstrap, const Config& config);

}  // namespace peerreduce
