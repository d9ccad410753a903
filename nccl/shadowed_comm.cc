#include "nccl/shadowed_comm.h"

#include <cstdio>

namespace peerreduce::nccl {

ShadowedComm::~ShadowedComm() {
  // Printed here, when the last call holding this state has returned, rather than at ncclCommAbort: an
  // abort from another thread would read the counters a call in flight is still writing.
  if (released.load(std::memory_order_acquire) && settings.summary) {
    std::fprintf(stderr, "peerreduce nccl summary: %s\n",
                 describeCounters(counters, rank, size, peerUsable() ? std::string() : whyNoPeer()).c_str());
  }
  destroyPeerSide(peer, false);
}

std::string ShadowedComm::whyNoPeer() const {
  if (const char* why = ended_why.load(std::memory_order_acquire)) return why;
  return peer.absent_reason;
}

void ShadowedComm::endPeer(const char* why) {
  const std::lock_guard<std::mutex> lock(peer_mutex);
  if (peer.comm == nullptr) return;
  const char* none = nullptr;
  if (!ended_why.compare_exchange_strong(none, why, std::memory_order_acq_rel)) return;  // ended already
  // Safe from any thread: ends the waits of a call in flight, which then fails and returns.
  (void)prCommAbort(peer.comm);
}

}  // namespace peerreduce::nccl
