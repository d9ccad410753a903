#include "gpu/peer_record.h"

#include <cstring>
#include <limits>
#include <string>

#include "memory/shared_host_segment.h"

namespace peerreduce::gpu {

// Sent as raw bytes between processes of one build: the layout must have no padding, whose contents
// would be indeterminate.
static_assert(sizeof(PeerRecord) == 4 * 4 + 8 * 4 + 4 * 4 + kIpcHandleBytes + 4 * 2 + kSharedNameBytes);
static_assert(kSharedNameBytes == kMaxSharedNameBytes, "the record's name field holds every segment name");

namespace {

// A record of exactly sizeof(Record) bytes, copied out (the bytes may be unaligned), or kCorrupt.
template <typename Record>
StatusOr<Record> fromBytes(std::span<const std::byte> bytes, const std::string& who) {
  if (bytes.size() != sizeof(Record)) {
    return corruptError(who + "record of " + std::to_string(bytes.size()) + " bytes, expected " +
                        std::to_string(sizeof(Record)));
  }
  Record record;
  std::memcpy(&record, bytes.data(), sizeof(record));
  return record;
}

}  // namespace

std::vector<std::byte> encodePeerRecord(const PeerRecord& record) {
  std::vector<std::byte> out(sizeof(record));
  std::memcpy(out.data(), &record, sizeof(record));
  return out;
}

StatusOr<PeerRecord> decodePeerRecord(std::span<const std::byte> bytes, int peer, const PeerRecordExpectation& expect) {
  const std::string who = "rank " + std::to_string(expect.rank) + " mapping rank " + std::to_string(peer) + ": ";
  PR_ASSIGN_OR_RETURN(const PeerRecord record, fromBytes<PeerRecord>(bytes, who));
  if (record.magic != kPeerRecordMagic || record.version != kPeerRecordVersion) {
    return corruptError(who + "record is not a peerreduce GPU record of version " + std::to_string(kPeerRecordVersion));
  }
  if (record.world_size != expect.world_size) {
    return mismatchError(who + "the peer was created for " + std::to_string(record.world_size) +
                         " ranks, this rank for " + std::to_string(expect.world_size));
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
  if (record.multiprocessors < 1 || record.multiprocessors > kMaxPeerBlocks) {
    return corruptError(who + "record gives its device " + std::to_string(record.multiprocessors) +
                        " multiprocessors; expected 1.." + std::to_string(kMaxPeerBlocks));
  }
  // The address is dereferenced (by kernels) when the peer shares this process: it must at least
  // describe a region that does not wrap around the address space.
  if (record.region_address == 0 ||
      record.region_address > std::numeric_limits<std::uint64_t>::max() - record.region_bytes) {
    return corruptError(who + "record's region address " + std::to_string(record.region_address) + " cannot hold " +
                        std::to_string(record.region_bytes) + " bytes");
  }
  if (record.placement != RegionPlacement::kDevice && record.placement != RegionPlacement::kHost) {
    return corruptError(who + "record places its region in memory kind " +
                        std::to_string(static_cast<std::uint32_t>(record.placement)) + " (0: device, 1: host)");
  }
  const std::size_t name_length = strnlen(record.shared_name, kSharedNameBytes);
  if (name_length == kSharedNameBytes) return corruptError(who + "record's shared-memory name is not terminated");
  const std::string name(record.shared_name, name_length);
  if (record.placement == RegionPlacement::kDevice ? !name.empty()
                                                   : !name.empty() && !SharedHostSegment::wellFormedName(name)) {
    return corruptError(who + "record's shared-memory name '" + name + "' is not one a " +
                        (record.placement == RegionPlacement::kDevice ? "device region has (none)"
                                                                      : "host region has (/peerreduce-...)"));
  }
  return record;
}

static_assert(sizeof(BufferRecord) == 4 * 4 + 8 * 4 + kIpcHandleBytes);

std::vector<std::byte> encodeBufferRecord(const BufferRecord& record) {
  std::vector<std::byte> out(sizeof(record));
  std::memcpy(out.data(), &record, sizeof(record));
  return out;
}

StatusOr<BufferRecord> decodeBufferRecord(std::span<const std::byte> bytes, int peer, int receiver) {
  const std::string who =
      "rank " + std::to_string(receiver) + " opening a buffer of rank " + std::to_string(peer) + ": ";
  PR_ASSIGN_OR_RETURN(const BufferRecord record, fromBytes<BufferRecord>(bytes, who));
  if (record.magic != kBufferRecordMagic || record.version != kBufferRecordVersion) {
    return corruptError(who + "record is not a peerreduce GPU buffer record of version " +
                        std::to_string(kBufferRecordVersion));
  }
  if (record.rank != peer) return corruptError(who + "record names rank " + std::to_string(record.rank));
  if (record.base == 0 || record.bytes == 0 || record.bytes > std::numeric_limits<std::uint64_t>::max() - record.base) {
    return corruptError(who + "record names an allocation of " + std::to_string(record.bytes) + " bytes at " +
                        std::to_string(record.base) + ", which is empty or wraps the address space");
  }
  if (record.pid <= 0 || record.device < 0 || record.export_id == 0) {
    return corruptError(who + "record has a pid, device or export id out of range");
  }
  return record;
}

}  // namespace peerreduce::gpu
