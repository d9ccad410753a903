// Block caps for ranks sharing one device: see device_sharing.h.
#include "gpu/device_sharing.h"

#include <algorithm>

#include "peerreduce/transport.h"

namespace peerreduce::gpu {

int ranksPerSharedDevice(std::span<const PeerRecord> records) {
  int most = records.empty() ? 0 : 1;
  for (const PeerRecord& a : records) {  // O(n^2) over at most kMaxWorldSize records
    int sharing = 0;
    for (const PeerRecord& b : records) sharing += (a.pid == b.pid && a.device == b.device) ? 1 : 0;
    most = std::max(most, sharing);
  }
  return most;
}

int sharedDeviceBlockCap(std::span<const PeerRecord> records, int uncapped) {
  const int sharing = ranksPerSharedDevice(records);
  if (sharing <= 1) return uncapped;
  int multiprocessors = 0;
  for (const PeerRecord& r : records) {
    multiprocessors = multiprocessors == 0 ? r.multiprocessors : std::min(multiprocessors, r.multiprocessors);
  }
  return std::max(1, std::min(uncapped, multiprocessors / (sharing * kMaxStreams)));
}

}  // namespace peerreduce::gpu
