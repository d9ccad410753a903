// The GPU transport's peer record (lib/gpu/peer_record.h), validated without a GPU: every malformed
// or mismatched field is refused with the right code and a message naming receiver, peer and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>

#include "gpu/peer_record.h"

namespace peerreduce::gpu {
namespace {

constexpr std::uint64_t kRegion = std::uint64_t{4} << 20;
const PeerRecordExpectation kExpect{1, 4, kRegion};  // rank 1 of 4 receives

PeerRecord genuine(int peer) {
  PeerRecord record;
  record.rank = peer;
  record.world_size = 4;
  record.device = peer;
  record.pid = 4242;
  record.region_bytes = kRegion;
  record.region_address = 0x7f0000000000ull;
  record.token = 99;
  record.max_blocks = 32;
  record.multiprocessors = 132;
  return record;
}

void expectRefused(const std::vector<std::byte>& bytes, int peer, ErrorCode code,
                   std::initializer_list<const char*> parts) {
  auto decoded = decodePeerRecord(bytes, peer, kExpect);
  ASSERT_FALSE(decoded.isOk());
  EXPECT_EQ(decoded.status().code(), code) << decoded.status().toString();
  const std::string text = decoded.status().toString();
  EXPECT_NE(text.find("rank 1 mapping rank " + std::to_string(peer)), std::string::npos) << text;
  for (const char* part : parts) EXPECT_NE(text.find(part), std::string::npos) << text << " lacks " << part;
}

template <typename Edit>
std::vector<std::byte> edited(int peer, Edit edit) {
  PeerRecord record = genuine(peer);
  edit(record);
  return encodePeerRecord(record);
}

TEST(GpuPeerRecord, AGenuineRecordDecodesToItsFields) {
  auto decoded = decodePeerRecord(encodePeerRecord(genuine(2)), 2, kExpect);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(decoded->rank, 2);
  EXPECT_EQ(decoded->region_bytes, kRegion);
  EXPECT_EQ(decoded->max_blocks, 32);
  EXPECT_EQ(decoded->token, 99u);
}

TEST(GpuPeerRecord, WrongLengthIsCorrupt) {
  auto bytes = encodePeerRecord(genuine(2));
  bytes.pop_back();
  expectRefused(bytes, 2, ErrorCode::kCorrupt, {"record of 199 bytes, expected 200"});
  bytes.resize(256);
  expectRefused(bytes, 2, ErrorCode::kCorrupt, {"256 bytes"});
  expectRefused({}, 2, ErrorCode::kCorrupt, {"0 bytes"});
}

TEST(GpuPeerRecord, WrongMagicOrVersionIsCorrupt) {
  expectRefused(edited(0, [](PeerRecord& r) { r.magic ^= 1; }), 0, ErrorCode::kCorrupt,
                {"not a peerreduce GPU record"});
  expectRefused(edited(0, [](PeerRecord& r) { r.version = 3; }), 0, ErrorCode::kCorrupt, {"version 4"});
}

TEST(GpuPeerRecord, AnotherWorldSizeIsAMismatch) {
  expectRefused(edited(3, [](PeerRecord& r) { r.world_size = 8; }), 3, ErrorCode::kMismatch,
                {"created for 8 ranks, this rank for 4"});
}

TEST(GpuPeerRecord, ARankOutOfRangeOrOfAnotherPeerIsCorrupt) {
  expectRefused(edited(2, [](PeerRecord& r) { r.rank = 4; }), 2, ErrorCode::kCorrupt, {"names rank 4", "0..3"});
  expectRefused(edited(2, [](PeerRecord& r) { r.rank = -1; }), 2, ErrorCode::kCorrupt, {"names rank -1"});
  expectRefused(edited(2, [](PeerRecord& r) { r.rank = 1; }), 2, ErrorCode::kCorrupt, {"names rank 1"});
}

TEST(GpuPeerRecord, ARegionOfAnotherSizeIsAMismatch) {
  expectRefused(edited(0, [](PeerRecord& r) { r.region_bytes = kRegion * 2; }), 0, ErrorCode::kMismatch,
                {"region of 8388608 bytes", "4194304", "same scratch size"});
}

TEST(GpuPeerRecord, BlockCountsOutsideOneToTheMaximumAreCorrupt) {
  expectRefused(edited(0, [](PeerRecord& r) { r.max_blocks = 0; }), 0, ErrorCode::kCorrupt, {"allows 0 blocks"});
  expectRefused(edited(0, [](PeerRecord& r) { r.max_blocks = kMaxPeerBlocks + 1; }), 0, ErrorCode::kCorrupt,
                {"allows 4097 blocks"});
  auto most = decodePeerRecord(edited(0, [](PeerRecord& r) { r.max_blocks = kMaxPeerBlocks; }), 0, kExpect);
  EXPECT_TRUE(most.isOk()) << most.status().toString();
}

TEST(GpuPeerRecord, MultiprocessorCountsOutsideOneToTheMaximumAreCorrupt) {
  expectRefused(edited(0, [](PeerRecord& r) { r.multiprocessors = 0; }), 0, ErrorCode::kCorrupt, {"0 multiprocessors"});
  expectRefused(edited(0, [](PeerRecord& r) { r.multiprocessors = kMaxPeerBlocks + 1; }), 0, ErrorCode::kCorrupt,
                {"4097 multiprocessors"});
}

TEST(GpuPeerRecord, ANegativeDeviceOrARegionThatWrapsIsCorrupt) {
  expectRefused(edited(0, [](PeerRecord& r) { r.device = -3; }), 0, ErrorCode::kCorrupt, {"device -3"});
  expectRefused(edited(0, [](PeerRecord& r) { r.region_address = 0; }), 0, ErrorCode::kCorrupt, {"region address 0"});
  expectRefused(edited(0, [](PeerRecord& r) { r.region_address = std::numeric_limits<std::uint64_t>::max() - 10; }), 0,
                ErrorCode::kCorrupt, {"cannot hold 4194304 bytes"});
}

// --- where the region lives: device memory, or pinned host memory behind host-staged links ---

void setName(PeerRecord& r, const std::string& name) {
  std::memset(r.shared_name, 0, sizeof(r.shared_name));
  std::memcpy(r.shared_name, name.data(), std::min(name.size(), sizeof(r.shared_name)));
}

TEST(GpuPeerRecord, AHostPlacedRegionTravelsWithItsSharedName) {
  const std::string name = "/peerreduce-4242-7-00000000deadbeef";
  auto decoded = decodePeerRecord(edited(2,
                                         [&](PeerRecord& r) {
                                           r.placement = RegionPlacement::kHost;
                                           setName(r, name);
                                         }),
                                  2, kExpect);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(decoded->placement, RegionPlacement::kHost);
  EXPECT_EQ(std::string(decoded->shared_name), name);
  // No name: only peers of the same process can reach it, which connectPeers checks.
  auto unnamed = decodePeerRecord(edited(2, [](PeerRecord& r) { r.placement = RegionPlacement::kHost; }), 2, kExpect);
  EXPECT_TRUE(unnamed.isOk()) << unnamed.status().toString();
}

TEST(GpuPeerRecord, AnUnknownPlacementIsCorrupt) {
  expectRefused(edited(1, [](PeerRecord& r) { r.placement = static_cast<RegionPlacement>(2); }), 1, ErrorCode::kCorrupt,
                {"memory kind 2", "0: device, 1: host"});
}

TEST(GpuPeerRecord, ASharedNameThatIsUnterminatedOrNotOursIsCorrupt) {
  expectRefused(edited(1,
                       [](PeerRecord& r) {
                         r.placement = RegionPlacement::kHost;
                         std::memset(r.shared_name, 'a', sizeof(r.shared_name));
                       }),
                1, ErrorCode::kCorrupt, {"not terminated"});
  // A name that could reach another file is refused before anything opens it.
  for (const char* bad : {"/etc/passwd", "/peerreduce-../x", "peerreduce-1-2-3", "/peerreduce-"}) {
    expectRefused(edited(1,
                         [&](PeerRecord& r) {
                           r.placement = RegionPlacement::kHost;
                           setName(r, bad);
                         }),
                  1, ErrorCode::kCorrupt, {"shared-memory name", bad});
  }
  // A device region carries no name.
  expectRefused(edited(1, [](PeerRecord& r) { setName(r, "/peerreduce-1-2-3"); }), 1, ErrorCode::kCorrupt,
                {"device region has (none)"});
}

// --- the buffer record of a registered allocation ---

BufferRecord genuineBuffer(int peer) {
  BufferRecord record;
  record.rank = peer;
  record.device = peer;
  record.pid = 4242;
  record.export_id = 7;
  record.base = 0x7f1000000000ull;
  record.bytes = std::uint64_t{1} << 20;
  return record;
}

void expectBufferRefused(const BufferRecord& record, std::initializer_list<const char*> words) {
  auto decoded = decodeBufferRecord(encodeBufferRecord(record), 2, 1);
  ASSERT_FALSE(decoded.isOk());
  EXPECT_EQ(decoded.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(decoded.status().message().find("rank 1 opening a buffer of rank 2"), std::string::npos)
      << decoded.status().toString();
  for (const char* w : words)
    EXPECT_NE(decoded.status().message().find(w), std::string::npos) << decoded.status().toString();
}

TEST(GpuBufferRecord, AGenuineRecordRoundTrips) {
  auto decoded = decodeBufferRecord(encodeBufferRecord(genuineBuffer(2)), 2, 1);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  EXPECT_EQ(decoded->base, 0x7f1000000000ull);
  EXPECT_EQ(decoded->bytes, std::uint64_t{1} << 20);
  EXPECT_EQ(decoded->export_id, 7u);
}

TEST(GpuBufferRecord, WrongSizeMagicVersionOrRankIsCorrupt) {
  std::vector<std::byte> bytes = encodeBufferRecord(genuineBuffer(2));
  bytes.pop_back();
  auto cut = decodeBufferRecord(bytes, 2, 1);
  EXPECT_EQ(cut.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(cut.status().message().find("bytes, expected"), std::string::npos);
  BufferRecord r = genuineBuffer(2);
  r.magic = kPeerRecordMagic;  // a creation record is not a buffer record
  expectBufferRefused(r, {"not a peerreduce GPU buffer record"});
  r = genuineBuffer(2);
  r.version = 9;
  expectBufferRefused(r, {"version 1"});
  expectBufferRefused(genuineBuffer(3), {"names rank 3"});
}

TEST(GpuBufferRecord, AnEmptyOrWrappingAllocationOrBadIdentityIsCorrupt) {
  BufferRecord r = genuineBuffer(2);
  r.base = 0;
  expectBufferRefused(r, {"empty or wraps"});
  r = genuineBuffer(2);
  r.bytes = 0;
  expectBufferRefused(r, {"empty or wraps"});
  r = genuineBuffer(2);
  r.base = std::numeric_limits<std::uint64_t>::max() - 10;
  expectBufferRefused(r, {"empty or wraps"});
  r = genuineBuffer(2);
  r.pid = 0;
  expectBufferRefused(r, {"pid, device or export id"});
  r = genuineBuffer(2);
  r.device = -1;
  expectBufferRefused(r, {"pid, device or export id"});
  r = genuineBuffer(2);
  r.export_id = 0;
  expectBufferRefused(r, {"pid, device or export id"});
}

}  // namespace
}  // namespace peerreduce::gpu
