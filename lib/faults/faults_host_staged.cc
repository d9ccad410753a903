// The faults of host-staged links: the staged path dying, a copy through host memory stalling, and the
// pinned host memory the copies need running out in the middle of a run.
//
// A dead host-staged path is a dead link (steps over it fail with kLinkDown naming the link, the
// failure detector reports it, survivors shrink around it). A stalled copy goes through the transport's
// clock (FaultHooks::stallHostCopy): peers waiting on the rank may pass their deadlines (kTimeout). Pinned
// exhaustion takes the rank's pool, which the injector learns when the communicator hands it to the
// transport (LinkAdoption passes through FaultyTransport), up to its limit, as another user of pinned
// memory would: the next copy that needs a block fails with the pool's kOutOfMemory naming
// PEERREDUCE_PINNED_LIMIT_BYTES, until healTransient gives the memory back.
#include <bit>

#include "faults/faulty_transport.h"

namespace peerreduce::faults {

Status FaultController::injectHostStaged(const Fault& f) {
  const int n = world_size_;
  const auto r = static_cast<std::size_t>(f.rank);
  switch (f.kind) {
    case FaultKind::kHostLinkDown:
      link_down_[static_cast<std::size_t>(f.rank * n + f.peer)] = 1;
      link_down_[static_cast<std::size_t>(f.peer * n + f.rank)] = 1;
      if (hooks_) {
        hooks_->setLinkDown(f.rank, f.peer, true);
        hooks_->setLinkDown(f.peer, f.rank, true);
      }
      return Status::ok();
    case FaultKind::kHostCopyStall:
      if (!hooks_) return unsupportedError("a stalled host copy needs a transport with a clock (FaultHooks)");
      hooks_->stallHostCopy(f.rank, f.duration_us);
      return Status::ok();
    case FaultKind::kPinnedExhausted: {
      const std::shared_ptr<PinnedHostPool>& pool = pinned_pools_[r];
      if (!pool) {
        return unsupportedError("fault '" + f.describe() +
                                "': the rank's transport was given no pinned pool (it adopted no links)");
      }
      // Largest blocks first: after a size fails, the room left is below it, so each smaller size succeeds
      // at most once; the loop ends within limit / kPinnedPageBytes acquisitions however it goes.
      auto& taken = pinned_taken_[r];
      for (std::size_t size = std::bit_floor(pool->options().limit_bytes); size >= kPinnedPageBytes; size /= 2) {
        for (auto block = pool->acquire(size); block.isOk(); block = pool->acquire(size)) {
          taken.push_back(std::move(block).value());
        }
      }
      return Status::ok();
    }
    default:
      return internalError("fault '" + f.describe() + "' is not a host-staged fault");
  }
}

void FaultController::registerPinnedPool(int rank, std::shared_ptr<PinnedHostPool> pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (rank < 0 || rank >= world_size_) return;
  pinned_pools_[static_cast<std::size_t>(rank)] = std::move(pool);
}

TransportCapabilities FaultyTransport::capabilities() {
  TransportCapabilities c = TransportWrapper::capabilities();
  if (c.link_adoption != nullptr) c.link_adoption = this;
  if (c.probe_fallback != nullptr) c.probe_fallback = this;
  return c;
}

Status FaultyTransport::adoptLinks(const Topology& agreed, std::shared_ptr<PinnedHostPool> staging) {
  LinkAdoption* inner = TransportWrapper::capabilities().link_adoption;
  if (inner == nullptr) return internalError(name() + ": the inner transport lost its LinkAdoption");
  controller_->registerPinnedPool(identity().rank, staging);
  return inner->adoptLinks(agreed, std::move(staging));
}

}  // namespace peerreduce::faults
