// Creation's exchange of symmetric memory: each rank opens its region, the records are all-gathered, each
// rank maps its peers; where access probes failed, the ranks agree on the pairs (api/probe_agreement.h),
// fall back to host-staged links for them and exchange once more.
#pragma once

#include "api/communicator_impl.h"
#include "peerreduce/status.h"

namespace peerreduce {

// Runs the exchange on every rank of `impl`'s world; every rank returns together with the same verdict.
Status exchangeSymmetricMemory(Communicator::Impl& impl);

}  // namespace peerreduce
