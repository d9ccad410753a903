// A C++ Bootstrap handed to the C API: for C++ programs that have a rendezvous of their own (a Bootstrap
// subclass) and create communicators through prCommInitRank, and for bootstrap libraries built on
// peerreduce (the MPI library's prBootstrapFromMpi is made this way).
#pragma once

#include <functional>
#include <memory>

#include "peerreduce/bootstrap.h"
#include "peerreduce/peerreduce.h"
#include "peerreduce/status.h"

namespace peerreduce {

// Calls `make` and publishes what it made as a prBootstrap_t for `*bootstrap` (ended by
// prBootstrapDestroy; communicators made with it run on a GPU, as with prBootstrapCreate). On failure
// (a NULL `bootstrap`, `make`'s error, a NULL bootstrap made, an exception) returns the typed result,
// sets *bootstrap to NULL and leaves the message for prGetLastError() under the name `function`.
// `describe` names the rendezvous in messages ("MPI", "application callbacks").
prResult_t publishCBootstrap(const char* function, const std::function<StatusOr<std::shared_ptr<Bootstrap>>()>& make,
                             const char* describe, prBootstrap_t* bootstrap) noexcept;

}  // namespace peerreduce
