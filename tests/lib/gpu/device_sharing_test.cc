// Ranks sharing one device in one process get kernels small enough to be resident together, and every
// rank computes the same cap from the same records.
#include "gpu/device_sharing.h"

#include <gtest/gtest.h>

#include <vector>

#include "peerreduce/transport.h"

namespace peerreduce::gpu {
namespace {

PeerRecord rankOn(int rank, std::int64_t pid, int device, int multiprocessors = 132) {
  PeerRecord r;
  r.rank = rank;
  r.pid = pid;
  r.device = device;
  r.multiprocessors = multiprocessors;
  r.max_blocks = 132;
  return r;
}

TEST(DeviceSharing, OneRankPerDeviceIsNotCapped) {
  const std::vector<PeerRecord> records{rankOn(0, 7, 0), rankOn(1, 7, 1), rankOn(2, 7, 2), rankOn(3, 7, 3)};
  EXPECT_EQ(ranksPerSharedDevice(records), 1);
  EXPECT_EQ(sharedDeviceBlockCap(records, 132), 132);
}

TEST(DeviceSharing, ProcessesSharingADeviceTimeSliceAndAreNotCapped) {
  const std::vector<PeerRecord> records{rankOn(0, 7, 0), rankOn(1, 8, 0), rankOn(2, 9, 0)};
  EXPECT_EQ(ranksPerSharedDevice(records), 1);
  EXPECT_EQ(sharedDeviceBlockCap(records, 64), 64);
}

TEST(DeviceSharing, ThreadsSharingADeviceSplitItsMultiprocessorsOverRanksAndStreams) {
  const std::vector<PeerRecord> four{rankOn(0, 7, 0), rankOn(1, 7, 0), rankOn(2, 7, 0), rankOn(3, 7, 0)};
  EXPECT_EQ(ranksPerSharedDevice(four), 4);
  EXPECT_EQ(sharedDeviceBlockCap(four, 132), 132 / (4 * kMaxChannels));
  // Two pairs on two devices: the pairs decide, and the smaller device.
  const std::vector<PeerRecord> pairs{rankOn(0, 7, 0, 132), rankOn(1, 7, 0, 132), rankOn(2, 7, 1, 78),
                                      rankOn(3, 7, 1, 78)};
  EXPECT_EQ(sharedDeviceBlockCap(pairs, 132), 78 / (2 * kMaxChannels));
  EXPECT_EQ(sharedDeviceBlockCap(pairs, 4), 4) << "never above what the ranks agreed anyway";
  // A tiny device still gets one block per kernel.
  const std::vector<PeerRecord> tiny{rankOn(0, 7, 0, 2), rankOn(1, 7, 0, 2), rankOn(2, 7, 0, 2)};
  EXPECT_EQ(sharedDeviceBlockCap(tiny, 32), 1);
}

TEST(DeviceSharing, ARankSharingItsDeviceInItsProcessMustNotUseTheDefaultStream) {
  const std::vector<PeerRecord> shared{rankOn(0, 7, 0), rankOn(1, 7, 0), rankOn(2, 8, 0), rankOn(3, 7, 1)};
  EXPECT_TRUE(sharesDeviceInProcess(shared, 0));
  EXPECT_TRUE(sharesDeviceInProcess(shared, 1));
  EXPECT_FALSE(sharesDeviceInProcess(shared, 2)) << "another process: the device time-slices, streams are its own";
  EXPECT_FALSE(sharesDeviceInProcess(shared, 3)) << "alone on its device";
  const Status refused = checkStreamOfSharedDevice(true, true, 1);
  EXPECT_EQ(refused.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("rank 1 shares its GPU"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("stream of its own"), std::string::npos) << refused.message();
  EXPECT_TRUE(checkStreamOfSharedDevice(true, false, 1).isOk());
  EXPECT_TRUE(checkStreamOfSharedDevice(false, true, 1).isOk());
}

}  // namespace
}  // namespace peerreduce::gpu
