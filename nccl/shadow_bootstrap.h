// The Bootstrap of peerreduce's side of an NCCL communicator, carried by the real (shadow) NCCL
// communicator itself, so the NCCL-compatible library needs no network code and no rendezvous of its own.
//
// Each all-gather of fixed-size records is the real ncclAllGather on a small device buffer
// (device_staging.h), in two steps: first every rank's record length (8 bytes, so ranks that disagree are a
// kMismatch naming both lengths instead of a real all-gather of different sizes), then the records. The
// records travel in the callback bootstrap's frames (bootstrap/callback_bootstrap.h: rank, world size,
// collective number, length checked on arrival), and the barrier is an all-gather. Every step is bounded by
// the caller's timeout (Config::bootstrapTimeout()): the stream is polled, with the real communicator's
// asynchronous error, until it is done or the deadline passes (kTimeout naming the rank).
//
// Used at creation only, while the application waits in ncclCommInitRank (or its siblings), so nothing
// else runs on the real communicator meanwhile.
#pragma once

#include <memory>

#include "nccl/device_staging.h"
#include "nccl/real_nccl.h"
#include "peerreduce/bootstrap.h"
#include "peerreduce/status.h"

namespace peerreduce::nccl {

// `real` must outlive the bootstrap; `real_comm` must stay valid while it is used.
StatusOr<std::shared_ptr<Bootstrap>> createShadowBootstrap(int rank, int size, RealNccl& real, void* real_comm,
                                                           std::shared_ptr<DeviceStaging> staging);

}  // namespace peerreduce::nccl
