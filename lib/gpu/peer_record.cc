#include "gpu/peer_record.h"

#include <cstring>
#include <limits>
#include <string>

namespace peerreduce::gpu {

// Sent as raw bytes between processes of one build: the layout must have no padding, whose contents
// would be indeterminate.
static_assert(sizeof(PeerRecord) == 4 * 4 + 8 * 4 + 4 * 2 + kIpcHandleBytes);

std::vector<std::byte> encodePeerRecord(const PeerRecord& record) {
  std::vector<std::byte> out(sizeof(record));
  std::memcpy(out.data(), &record, sizeof(record));
  return out;
}

StatusOr<PeerRecord> decodePeerRecord(std::span<const std::byte> bytes, int peer, const PeerRecordExpectation& expect) {
  const std::string who = "rank " + std::to_string(expect.rank) + " mapping rank " + std::to_string(peer) + ": ";
  if (bytes.size() != sizeof(PeerRecord)) {
    return corruptError(who + "record of " + std::to_string(bytes.size()) + " bytes, expected " +
                        std::to_string(sizeof(PeerRecord)));
  }
  PeerRecord record;
  std::memcpy(&record, bytes.data(), sizeof(record));
  if (record.magic != kPeerRecordMagic || record.version != kPeerRecordVersion) {
    return corruptError(who + "record is not a peerreduce GPU record of version " + std::to_string(kPeerRecordVersion));
  }
  if (record.world_size != expect.world_size) {
    return mismatchError(who + "the peer was created for " + std::to_string(record.world_size) + " ranks, this rank for " +
                         std::to_string(expect.world_size));
  }
  if (record.rank != peer) {
    return corruptError(who + "record names rank " + std::to_string(record.rank) + " (ranks are 0.." +
                        std::to_string(expect.world_size - 1) + ")");
  }
  if (record.region_bytes != expect.region_bytes) {
    return mismatchError(who + "region of " + std::to_string(record.region_bytes) + " bytes, this rank's is " +
                         std::to_string(expect.region_bytes) + " (every rank must use the same scratch size)");
  }
  if (record.max_blocks < 1 || record.max_blocks > kMaxPeerBlocks) {
    return corruptError(who + "record allows " + std::to_string(record.max_blocks) + " blocks; expected 1.." +
                        std::to_string(kMaxPeerBlocks));
  }
  if (record.device < 0) return corruptError(who + "record names device " + std::to_string(record.device));
  // The address is dereferenced (by kernels) when the peer shares this process: it must at least
  // describe a region that does not wrap around the address space.
  if (record.region_address == 0 ||
      record.region_address > std::numeric_limits<std::uint64_t>::max() - record.region_bytes) {
    return corruptError(who + "record's region address " + std::to_string(record.region_address) +
                        " cannot hold " + std::to_string(record.region_bytes) + " bytes");
  }
  return record;
}

}  // namespace peerreduce::gpu
