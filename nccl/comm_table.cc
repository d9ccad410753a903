#include "nccl/comm_table.h"

#include <string>
#include <utility>

namespace peerreduce::nccl {

Status CommTable::add(std::shared_ptr<ShadowedComm> comm) {
  if (comm == nullptr || comm->real == nullptr) {
    return invalidArgumentError("a communicator without a real NCCL communicator cannot be tracked");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (comms_.size() >= capacity_) {
    return unavailableError(std::to_string(capacity_) +
                            " NCCL communicators of libpeerreduce_nccl are live already; destroy some first");
  }
  const void* real = comm->real;
  if (!comms_.emplace(real, std::move(comm)).second) {
    return invalidArgumentError("the real NCCL returned a communicator handle that is already live");
  }
  return Status::ok();
}

std::shared_ptr<ShadowedComm> CommTable::find(const void* real) const {
  if (real == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = comms_.find(real);
  return found == comms_.end() ? nullptr : found->second;
}

std::shared_ptr<ShadowedComm> CommTable::remove(const void* real) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = comms_.find(real);
  if (found == comms_.end()) return nullptr;
  std::shared_ptr<ShadowedComm> removed = std::move(found->second);
  comms_.erase(found);
  return removed;
}

std::size_t CommTable::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return comms_.size();
}

}  // namespace peerreduce::nccl
