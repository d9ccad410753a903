// BufferRegistrations: see buffer_registrations.h.
#include "api/buffer_registrations.h"

#include <algorithm>
#include <string>

namespace peerreduce {

// The cache's resolver and exporter, answered by the transport's buffer-sharing capability.
class BufferRegistrations::TransportHooks final : public AllocationResolver, public HandleExporter {
 public:
  // `sharing` is `transport`'s capability; holding the transport keeps it alive.
  TransportHooks(std::shared_ptr<Transport> transport, BufferSharing& sharing)
      : transport_(std::move(transport)), sharing_(sharing) {}

  void setPendingBytes(std::size_t bytes) { pending_bytes_ = bytes; }

  StatusOr<AddressRange> allocationOf(const void* ptr) const override {
    PR_ASSIGN_OR_RETURN(BufferAllocation allocation, sharing_.allocationOf(ptr, pending_bytes_));
    return AddressRange{reinterpret_cast<std::uintptr_t>(allocation.base), allocation.bytes};
  }
  StatusOr<std::vector<std::byte>> exportAllocation(const AddressRange& allocation) override {
    return sharing_.exportBuffer(reinterpret_cast<const void*>(allocation.base), allocation.bytes);
  }
  void releaseExport(const AddressRange& allocation, const std::vector<std::byte>& /*record*/) override {
    sharing_.releaseBuffer(reinterpret_cast<const void*>(allocation.base), allocation.bytes);
  }

 private:
  std::shared_ptr<Transport> transport_;
  BufferSharing& sharing_;
  std::size_t pending_bytes_ = 0;
};

BufferRegistrations::~BufferRegistrations() {
  // Handles may outlive the communicator: they must see the end of their registration.
  for (const auto& state : live_) state->live = false;
  cache_.reset();  // releases every export, in base order
}

StatusOr<RegistrationCache*> BufferRegistrations::cache(const std::shared_ptr<Transport>& transport, int rank) {
  if (!cache_) {
    BufferSharing* sharing = transport->capabilities().buffer_sharing;
    if (sharing == nullptr) {
      return unsupportedError(transport->name() + " cannot register user buffers (it cannot share buffers with peers)");
    }
    auto hooks = std::make_shared<TransportHooks>(transport, *sharing);
    PR_ASSIGN_OR_RETURN(cache_, RegistrationCache::create(hooks, hooks, kDefaultMaxRegistrations, rank));
    hooks_ = std::move(hooks);
  }
  return cache_.get();
}

StatusOr<Registration> BufferRegistrations::registerLocal(const std::shared_ptr<Transport>& transport, int rank,
                                                          const void* ptr, std::size_t bytes) {
  PR_ASSIGN_OR_RETURN(RegistrationCache * cache, this->cache(transport, rank));
  hooks_->setPendingBytes(bytes);
  return cache->registerBuffer(ptr, bytes);
}

Status BufferRegistrations::remove(const std::shared_ptr<detail::RegisteredBufferState>& state) {
  const auto it = std::find(live_.begin(), live_.end(), state);
  if (it == live_.end() || !cache_) {
    return internalError("registration of buffer " + std::to_string(reinterpret_cast<std::uintptr_t>(state->data)) +
                         " is not in this communicator's books");
  }
  live_.erase(it);
  state->live = false;
  return cache_->release(state->data);
}

bool BufferRegistrations::holds(const detail::RegisteredBufferState* state) const {
  return std::any_of(live_.begin(), live_.end(), [&](const auto& s) { return s.get() == state; });
}

RegistrationStats BufferRegistrations::stats() const { return cache_ ? cache_->stats() : RegistrationStats{}; }

}  // namespace peerreduce
