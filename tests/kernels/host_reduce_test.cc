// hostReduce's host-only contract: unaligned pointers, empty counts, and aborting (never UB) on
// programmer errors.
#include "host_reduce.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "reference/reference.h"

namespace peerreduce::kernels {
namespace {

using peerreduce::testing::compareToReference;
using peerreduce::testing::fillPayload;
using peerreduce::testing::referenceElementSize;
using peerreduce::testing::referenceReduce;

TEST(HostReduce, UnalignedPointersGiveTheSameBitsAsAligned) {
  constexpr int kSources = 3;
  constexpr std::size_t kCount = 300;
  constexpr std::uint64_t kSeed = 7;
  // Byte offsets that misalign every element type wider than one byte (and one that keeps 2-byte types
  // aligned but not 4- or 8-byte ones).
  constexpr std::size_t kOffsets[] = {1, 2, 3, 5};
  // Room for the largest element type plus the largest offset.
  constexpr std::size_t kSlackBytes = 16;
  for (int d = 0; d < kDataTypeCount; ++d) {
    for (int o = 0; o < kReduceOpCount; ++o) {
      const auto dtype = static_cast<DataType>(d);
      const auto op = static_cast<ReduceOp>(o);
      const std::size_t bytes = kCount * referenceElementSize(dtype);
      std::vector<std::vector<std::uint64_t>> aligned(kSources, std::vector<std::uint64_t>(bytes / 8 + 1));
      std::vector<const void*> aligned_srcs;
      for (int r = 0; r < kSources; ++r) {
        fillPayload(dtype, op, kSeed, r, aligned[static_cast<std::size_t>(r)].data(), kCount);
        aligned_srcs.push_back(aligned[static_cast<std::size_t>(r)].data());
      }
      // Every source a send buffer: a whole reduction (avg premultiplies each one).
      const std::uint8_t from_send[kSources] = {1, 1, 1};
      std::vector<std::uint64_t> want(bytes / 8 + 1);
      hostReduce(dtype, op, want.data(), aligned_srcs.data(), kSources, kCount, true, kSources, from_send);
      for (const std::size_t offset : kOffsets) {
        std::vector<std::vector<unsigned char>> shifted(kSources, std::vector<unsigned char>(bytes + kSlackBytes));
        std::vector<const void*> shifted_srcs;
        for (int r = 0; r < kSources; ++r) {
          auto& buffer = shifted[static_cast<std::size_t>(r)];
          std::memcpy(buffer.data() + offset, aligned[static_cast<std::size_t>(r)].data(), bytes);
          shifted_srcs.push_back(buffer.data() + offset);
        }
        std::vector<unsigned char> out(bytes + kSlackBytes);
        hostReduce(dtype, op, out.data() + offset, shifted_srcs.data(), kSources, kCount, true, kSources, from_send);
        EXPECT_EQ(std::memcmp(out.data() + offset, want.data(), bytes), 0)
            << "dtype " << d << " op " << o << " offset " << offset;
        const auto ref = referenceReduce(dtype, op, aligned_srcs, kCount);
        EXPECT_EQ(compareToReference(dtype, op, ref, out.data() + offset, kCount), "");
      }
    }
  }
}

TEST(HostReduce, ZeroCountTouchesNothing) {
  const void* srcs[] = {nullptr, nullptr};
  hostReduce(DataType::kFloat32, ReduceOp::kSum, nullptr, srcs, 2, 0, true, 2);
}

TEST(HostReduce, FinalizeIsANoOpForOpsOtherThanAvg) {
  const std::int32_t a[] = {5};
  const std::int32_t b[] = {6};
  const void* srcs[] = {a, b};
  std::int32_t out = 0;
  hostReduce(DataType::kInt32, ReduceOp::kSum, &out, srcs, 2, 1, true, 2);
  EXPECT_EQ(out, 11);
  hostReduce(DataType::kInt32, ReduceOp::kAvg, &out, srcs, 2, 1, true, 2);
  EXPECT_EQ(out, 5);
  hostReduce(DataType::kInt32, ReduceOp::kAvg, &out, srcs, 2, 1, false, 2);
  EXPECT_EQ(out, 11);  // a partial avg is a sum
}

// An int that is no enumerator of DataType / ReduceOp.
constexpr int kInvalidEnumValue = 42;

TEST(HostReduceDeathTest, NoSourcesAborts) {
  std::int32_t out = 0;
  const void* srcs[] = {&out};
  EXPECT_DEATH(hostReduce(DataType::kInt32, ReduceOp::kSum, &out, srcs, 0, 1, false, 1), "nsrc >= 1");
}

TEST(HostReduceDeathTest, InvalidDtypeAborts) {
  std::int32_t out = 0;
  const void* srcs[] = {&out};
  EXPECT_DEATH(hostReduce(static_cast<DataType>(kInvalidEnumValue), ReduceOp::kSum, &out, srcs, 1, 1, false, 1),
               "valid DataType");
}

TEST(HostReduceDeathTest, InvalidOpAborts) {
  std::int32_t out = 0;
  const void* srcs[] = {&out};
  EXPECT_DEATH(hostReduce(DataType::kInt32, static_cast<ReduceOp>(kInvalidEnumValue), &out, srcs, 1, 1, false, 1),
               "valid ReduceOp");
}

TEST(HostReduceDeathTest, FinalizedAvgWithoutRanksAborts) {
  std::int32_t out = 0;
  const void* srcs[] = {&out};
  EXPECT_DEATH(hostReduce(DataType::kInt32, ReduceOp::kAvg, &out, srcs, 1, 1, true, 0), "world_size >= 1");
}

}  // namespace
}  // namespace peerreduce::kernels
