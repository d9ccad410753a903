// Block caps for ranks sharing one device: see device_sharing.h.
#include "gpu/device_sharing.h"

#include <algorithm>
#include <string>

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

bool sharesDeviceInProcess(std::span<const PeerRecord> records, int rank) {
  const PeerRecord* mine = nullptr;
  for (const PeerRecord& r : records) mine = r.rank == rank ? &r : mine;
  if (mine == nullptr) return false;
  for (const PeerRecord& r : records) {
    if (r.rank != rank && r.pid == mine->pid && r.device == mine->device) return true;
  }
  return false;
}

Status checkStreamOfSharedDevice(bool shares_device, bool default_stream, int rank) {
  if (!shares_device || !default_stream) return Status::ok();
  return invalidArgumentError("rank " + std::to_string(rank) +
                              " shares its GPU with another rank of this process and was given the default stream: "
                              "the ranks' kernels would run one after another there and wait for each other; give "
                              "each rank a stream of its own (e.g. cudaStreamCreateWithFlags(..., "
                              "cudaStreamNonBlocking))");
}

int sharedDeviceBlockCap(std::span<const PeerRecord> records, int uncapped) {
  const int sharing = ranksPerSharedDevice(records);
  if (sharing <= 1) return uncapped;
  int multiprocessors = 0;
  for (const PeerRecord& r : records) {
    multiprocessors = multiprocessors == 0 ? r.multiprocessors : std::min(multiprocessors, r.multiprocessors);
  }
  return std::max(1, std::min(uncapped, multiprocessors / (sharing * kMaxChannels)));
}

}  // namespace peerreduce::gpu
