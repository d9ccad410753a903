// BufferRegistrations: a communicator's registered user buffers (internal).
//
// Holds the RegistrationCache (exports cached by allocation base, through the transport's
// allocationOf / exportBuffer / releaseBuffer hooks) and the state of every live registration, so that
// destroying the communicator ends them all: handles still held see valid() == false, and each export
// is released once, in base order, by the cache.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "memory/registration_cache.h"
#include "peerreduce/registered_buffer.h"
#include "peerreduce/transport.h"

namespace peerreduce {

class BufferRegistrations {
 public:
  BufferRegistrations() = default;
  ~BufferRegistrations();
  BufferRegistrations(const BufferRegistrations&) = delete;
  BufferRegistrations& operator=(const BufferRegistrations&) = delete;

  // The cache, made on first use (the transport may not support registration at all).
  StatusOr<RegistrationCache*> cache(const std::shared_ptr<Transport>& transport, int rank);
  // Exports through the transport; `bytes` is the size of the buffer being registered now (the
  // transport's allocationOf needs it; the cache's resolver interface passes only the pointer).
  StatusOr<Registration> registerLocal(const std::shared_ptr<Transport>& transport, int rank, const void* ptr,
                                       std::size_t bytes);

  // Drops one reference taken by registerLocal (a registration that failed on another rank).
  void releaseLocal(const void* ptr) {
    if (cache_) cache_->release(ptr).ignoreError();
  }
  void add(std::shared_ptr<detail::RegisteredBufferState> state) { live_.push_back(std::move(state)); }
  // Ends `state`'s registration here: drops one reference to its export, marks it dead.
  Status remove(const std::shared_ptr<detail::RegisteredBufferState>& state);
  bool holds(const detail::RegisteredBufferState* state) const;
  RegistrationStats stats() const;

 private:
  class TransportHooks;
  std::shared_ptr<TransportHooks> hooks_;
  std::unique_ptr<RegistrationCache> cache_;
  std::vector<std::shared_ptr<detail::RegisteredBufferState>> live_;
};

}  // namespace peerreduce
