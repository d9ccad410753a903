// The simulated world a test's NCCL communicator runs peerreduce's side on (PEERREDUCE_NCCL_SIMULATE): the
// ranks are threads of one process, so rank 0 creates the world, hands it over through a process-wide
// table under a number it all-gathers, and every rank attaches its bootstrap to it. Only the ranks' own
// communicators keep the world alive afterwards (prSimWorldAttachBootstrap makes them its owners), so the
// table holds it only during creation.
#pragma once

#include <cstdint>

#include "bootstrap/rank_agreement.h"
#include "peerreduce/peerreduce.h"
#include "peerreduce/status.h"

namespace peerreduce::nccl {

// Collective over `agreement`'s ranks: communicators made with `bootstrap` (this rank's) then run on one
// simulated world of agreement.size() ranks seeded with `seed`. kUnavailable on every rank when rank 0
// could not create it or a rank could not find it (the ranks are not threads of one process).
Status attachSimulatedWorld(const RankAgreement& agreement, std::uint64_t seed, prBootstrap_t bootstrap);

}  // namespace peerreduce::nccl
