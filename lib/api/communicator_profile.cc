// Communicator: the profiling API (peerreduce/profiler.h; the records live in api/profiler.h).
#include <string>

#include "api/communicator_impl.h"
#include "peerreduce/communicator.h"

namespace peerreduce {
namespace {

Status profilingOff(const Communicator::Impl& impl) {
  return unavailableError("rank " + std::to_string(impl.rank) + ": profiling is off; call enableProfiling first");
}

}  // namespace

Status Communicator::enableProfiling(std::size_t capacity) {
  auto profiler = Profiler::create(capacity, impl_->size, *impl_->transport);
  if (!profiler.isOk()) {
    return profiler.status().withContext("enableProfiling on rank " + std::to_string(impl_->rank));
  }
  impl_->profiler = std::move(profiler).value();
  return Status::ok();
}

void Communicator::disableProfiling() { impl_->profiler.reset(); }

bool Communicator::profiling() const { return impl_->profiler != nullptr; }

StatusOr<std::vector<OperationProfile>> Communicator::profile() {
  if (!impl_->profiler) return profilingOff(*impl_);
  return impl_->profiler->records();
}

StatusOr<ProfileSummary> Communicator::profileSummary() {
  if (!impl_->profiler) return profilingOff(*impl_);
  return impl_->profiler->summary();
}

}  // namespace peerreduce
