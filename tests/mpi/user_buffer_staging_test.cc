// Staging of device buffers through pinned host memory (lib/mpi/user_buffer_staging.h), with a fake
// device: host vectors the fake reports as device memory, so the copies GPU builds make are checked on
// any machine: what is copied in and out, aliasing kept for in-place forms, errors passed on.
#include "mpi/user_buffer_staging.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "algorithms/algorithms.h"

namespace peerreduce::testing {
namespace {

// Memory the fake calls device memory, and a log of the copies made.
struct FakeDevice {
  std::vector<std::uint8_t> memory = std::vector<std::uint8_t>(1 << 16);
  std::size_t bytes_copied = 0;
  int copies = 0;
  int waits = 0;
  bool fail_copies = false;

  bool owns(const void* p) const {
    const auto* b = static_cast<const std::uint8_t*>(p);
    return b >= memory.data() && b < memory.data() + memory.size();
  }
  mpi::DeviceMemory device() {
    mpi::DeviceMemory d;
    d.is_device = [this](const void* p) { return owns(p); };
    d.copy = [this](void* dst, const void* src, std::size_t bytes, StreamHandle) -> Status {
      if (fail_copies) return unavailableError("fake copy failed");
      std::memcpy(dst, src, bytes);
      bytes_copied += bytes;
      copies += 1;
      return Status::ok();
    };
    d.wait = [this](StreamHandle) {
      waits += 1;
      return Status::ok();
    };
    return d;
  }
};

ExecutionRequest requestFor(Collective collective, bool in_place, int world, std::size_t count, std::size_t stride) {
  PlanRequest plan_request(Algorithm::kOneShot, world, in_place);
  plan_request.collective = collective;
  auto plan = buildPlan(plan_request);
  EXPECT_TRUE(plan.isOk());
  ExecutionRequest request;
  request.plan = std::make_shared<const Plan>(std::move(*plan));
  request.count = count;
  request.block_stride = stride;
  request.dtype = DataType::kInt32;
  request.layout = ChunkLayout::make(count, request.plan->num_chunks, sizeof(std::int32_t));
  return request;
}

TEST(UserBufferStaging, HostBuffersAreUsedInPlaceWithoutCopies) {
  FakeDevice fake;
  mpi::UserBufferStaging staging(0, std::size_t{1} << 20, fake.device());
  std::vector<std::int32_t> in(64), out(64);
  ExecutionRequest request = requestFor(Collective::kAllReduce, false, 2, 64, 64);
  request.send = in.data();
  request.recv = out.data();
  auto host = staging.stageIn(request, nullptr);
  ASSERT_TRUE(host.isOk()) << host.status().toString();
  EXPECT_EQ(host->send, in.data());
  EXPECT_EQ(host->recv, out.data());
  EXPECT_TRUE(staging.stageOut().isOk());
  EXPECT_EQ(fake.copies, 0);
}

TEST(UserBufferStaging, DeviceBuffersAreCopiedInAndTheOutputBack) {
  FakeDevice fake;
  mpi::UserBufferStaging staging(0, std::size_t{1} << 20, fake.device());
  auto* send = reinterpret_cast<std::int32_t*>(fake.memory.data());
  auto* recv = send + 1024;
  std::iota(send, send + 100, 1);
  ExecutionRequest request = requestFor(Collective::kAllReduce, false, 2, 100, 100);
  request.send = send;
  request.recv = recv;
  auto host = staging.stageIn(request, nullptr);
  ASSERT_TRUE(host.isOk()) << host.status().toString();
  ASSERT_FALSE(fake.owns(host->send));
  ASSERT_FALSE(fake.owns(host->recv));
  EXPECT_EQ(std::memcmp(host->send, send, 100 * sizeof(std::int32_t)), 0);
  EXPECT_EQ(fake.bytes_copied, 100 * sizeof(std::int32_t));  // the output is not copied in
  auto* host_out = static_cast<std::int32_t*>(host->recv);
  for (int i = 0; i < 100; ++i) host_out[i] = -i;
  ASSERT_TRUE(staging.stageOut().isOk());
  for (int i = 0; i < 100; ++i) ASSERT_EQ(recv[i], -i);
  EXPECT_EQ(fake.bytes_copied, 200 * sizeof(std::int32_t));
  EXPECT_GE(fake.waits, 2);  // after the copies in, and after the copies out
}

TEST(UserBufferStaging, InPlaceSegmentsKeepTheirAliasingAndOnlyTheirRangesMove) {
  // Reduce-scatter in place on 2 ranks, a segment of 10 elements of blocks 40 apart: rank 1's output is
  // its block of the input. Only the segment's range of each block is copied; the rest stays untouched.
  FakeDevice fake;
  mpi::UserBufferStaging staging(1, std::size_t{1} << 20, fake.device());
  auto* base = reinterpret_cast<std::int32_t*>(fake.memory.data());
  std::fill(base, base + 200, 7);
  ExecutionRequest request = requestFor(Collective::kReduceScatter, true, 2, 10, 40);
  request.send = base;
  request.recv = base + 40;  // rank 1's block
  auto host = staging.stageIn(request, nullptr);
  ASSERT_TRUE(host.isOk()) << host.status().toString();
  const auto* host_send = static_cast<const std::int32_t*>(host->send);
  auto* host_recv = static_cast<std::int32_t*>(host->recv);
  EXPECT_EQ(host_recv, host_send + 40);  // the same aliasing as on the device
  EXPECT_EQ(fake.bytes_copied, 2 * 10 * sizeof(std::int32_t));
  for (int i = 0; i < 10; ++i) host_recv[i] = 100 + i;
  ASSERT_TRUE(staging.stageOut().isOk());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(base[40 + i], 100 + i);
  for (int i = 10; i < 40; ++i) EXPECT_EQ(base[i], 7) << "element " << i << " outside the segment moved";
  for (int i = 50; i < 200; ++i) EXPECT_EQ(base[i], 7) << "element " << i << " outside the segment moved";
}

TEST(UserBufferStaging, APinnedLimitTooSmallIsOutOfMemoryNamingTheSetting) {
  FakeDevice fake;
  mpi::UserBufferStaging staging(0, 4096, fake.device());
  ExecutionRequest request = requestFor(Collective::kAllReduce, false, 2, 4096, 4096);
  request.send = fake.memory.data();
  request.recv = fake.memory.data() + 4096 * sizeof(std::int32_t);
  const auto host = staging.stageIn(request, nullptr);
  EXPECT_EQ(host.status().code(), ErrorCode::kOutOfMemory) << host.status().toString();
  EXPECT_NE(host.status().toString().find("PEERREDUCE_PINNED_LIMIT_BYTES"), std::string::npos)
      << host.status().toString();
}

TEST(UserBufferStaging, AFailedCopyIsPassedOn) {
  FakeDevice fake;
  fake.fail_copies = true;
  mpi::UserBufferStaging staging(0, std::size_t{1} << 20, fake.device());
  ExecutionRequest request = requestFor(Collective::kAllReduce, true, 2, 16, 16);
  request.send = fake.memory.data();
  request.recv = fake.memory.data();
  EXPECT_EQ(staging.stageIn(request, nullptr).status().code(), ErrorCode::kUnavailable);
}

TEST(UserBufferStaging, TheBuildsQueryCallsHostMemoryHostMemory) {
  // In every build (a GPU build without a driver included), host memory is never taken for device memory.
  std::vector<std::int32_t> buffer(8);
  const mpi::DeviceMemory device = mpi::platformDeviceMemory(0);
  EXPECT_FALSE(device.is_device(buffer.data()));
}

}  // namespace
}  // namespace peerreduce::testing
