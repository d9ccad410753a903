// The record a GPU rank sends its peers at creation (through the bootstrap) so they can map its
// symmetric region: written by GpuTransport::openSymmetric, read by connectPeers.
//
// Host-only on purpose (no GPU header): the bytes come from another process and are untrusted, so
// their validation is plain code that the fuzzers (fuzz/peer_record_fuzz.cc) and unit tests reach
// in a build without a GPU. The IPC handle itself is opaque here; only the GPU runtime can judge it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "peerreduce/status.h"

namespace peerreduce::gpu {

inline constexpr std::uint32_t kPeerRecordMagic = 0x50524750;  // "PRGP"
// Version 2 carries the sender's world size, so ranks started with different sizes fail at creation;
// version 3 its device's multiprocessors, so ranks sharing one device can size their kernels to be
// resident together; version 4 where its region lives (device memory, or pinned host memory behind
// host-staged links) and the shared-memory name a peer process maps it by.
inline constexpr std::uint32_t kPeerRecordVersion = 4;
inline constexpr std::size_t kIpcHandleBytes = 64;  // cudaIpcMemHandle_t and hipIpcMemHandle_t alike
// Blocks a kernel may use: more than any GPU has SMs or CUs, so a larger value is corruption.
inline constexpr std::int32_t kMaxPeerBlocks = 4096;
// Bytes of the shared-memory name's field (memory/shared_host_segment.h), its NUL included.
inline constexpr std::size_t kSharedNameBytes = 64;

// Where a rank's peer-reachable region lives.
enum class RegionPlacement : std::uint32_t {
  kDevice = 0,  // device memory: peers of other processes open the IPC handle
  kHost = 1,    // pinned host memory mapped into the GPU: peers of other processes map shared_name
};

struct PeerRecord {
  std::uint32_t magic = kPeerRecordMagic;
  std::uint32_t version = kPeerRecordVersion;
  std::int32_t rank = 0;
  std::int32_t device = 0;
  std::int64_t pid = 0;
  std::uint64_t region_bytes = 0;
  std::uint64_t region_address = 0;  // usable directly by another rank of the same process
  std::uint64_t token = 0;
  std::int32_t max_blocks = 0;
  std::int32_t world_size = 0;
  std::int32_t multiprocessors = 0;            // of the sender's device
  std::int32_t reserved = 0;                   // zero; keeps the handle 8-byte aligned
  std::byte ipc_handle[kIpcHandleBytes] = {};  // kDevice only
  RegionPlacement placement = RegionPlacement::kDevice;
  std::uint32_t reserved2 = 0;              // zero
  char shared_name[kSharedNameBytes] = {};  // kHost: NUL-terminated; empty when no other process may map it
};

std::vector<std::byte> encodePeerRecord(const PeerRecord& record);

// What the receiving rank expects of every record.
struct PeerRecordExpectation {
  int rank = 0;                    // the receiver, for messages
  int world_size = 1;              // the receiver's world size
  std::uint64_t region_bytes = 0;  // every rank's region has the receiver's size
};

// The record `peer` sent, or kCorrupt (malformed: size, magic, version, out-of-range values) or
// kMismatch (well formed but from a rank configured differently: another world size or region size),
// naming the receiver, the peer and the field. A host placement's name must be empty or one
// SharedHostSegment makes (so it can never name another file).
StatusOr<PeerRecord> decodePeerRecord(std::span<const std::byte> bytes, int peer, const PeerRecordExpectation& expect);

// The record of a user buffer's allocation (Communicator::registerBuffer): written by
// GpuTransport::exportBuffer, read by openPeerBuffer on the peers. Untrusted like PeerRecord.
inline constexpr std::uint32_t kBufferRecordMagic = 0x50524742;  // "PRGB"
inline constexpr std::uint32_t kBufferRecordVersion = 1;

struct BufferRecord {
  std::uint32_t magic = kBufferRecordMagic;
  std::uint32_t version = kBufferRecordVersion;
  std::int32_t rank = 0;
  std::int32_t device = 0;
  std::int64_t pid = 0;
  std::uint64_t export_id = 0;  // per exporting rank: a new export of the same base gets a new id
  std::uint64_t base = 0;       // the allocation's address in the exporting process
  std::uint64_t bytes = 0;      // the allocation's size
  std::byte ipc_handle[kIpcHandleBytes] = {};
};

std::vector<std::byte> encodeBufferRecord(const BufferRecord& record);
// The buffer record `peer` sent to `receiver`, checked for size, magic, version, the sender's rank,
// a non-null base and a size that does not wrap the address space; kCorrupt naming the field.
StatusOr<BufferRecord> decodeBufferRecord(std::span<const std::byte> bytes, int peer, int receiver);

}  // namespace peerreduce::gpu
