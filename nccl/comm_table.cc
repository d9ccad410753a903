#include "nccl/comm_table.h"

#include <string>

namespace peerreduce::nccl {

Status CommTable::add(ShadowedComm* comm) {
  if (comm == nullptr || comm->real == nullptr) {
    return invalidArgumentError("a communicator without a real NCCL communicator cannot be tracked");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (comms_.size() >= kMaxComms) {
    return unavailableError(std::to_string(kMaxComms) +
                            " NCCL communicators of libpeerreduce_nccl are live already; destroy some first");
  }
  if (!comms_.emplace(comm->real, comm).second) {
    return invalidArgumentError("the real NCCL returned a communicator handle that is already live");
  }
  return Status::ok();
}

ShadowedComm* CommTable::find(const void* real) const {
  if (real == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = comms_.find(real);
  return found == comms_.end() ? nullptr : found->second;
}

bool CommTable::remove(const ShadowedComm* comm) {
  if (comm == nullptr) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = comms_.find(comm->real);
  if (found == comms_.end() || found->second != comm) return false;
  comms_.erase(found);
  return true;
}

std::size_t CommTable::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return comms_.size();
}

}  // namespace peerreduce::nccl
