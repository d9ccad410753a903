// Hardware-only: the pinned host manager on a GPU machine takes its memory from shared-memory segments
// registered with the GPU runtime (platformHostAllocator), and its blocks work as pinned staging buffers: copies
// between them and device memory round-trip exactly, blocks are reused, and eviction under the limit returns memory.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "memory/host_allocator.h"
#include "memory/pinned_host_pool.h"
#include "portability.h"

namespace peerreduce {
namespace {

TEST(GpuPinnedMemory, BlocksComeFromTheRuntimeAndStageCopiesExactly) {
  auto allocator = platformHostAllocator();
  ASSERT_NE(allocator->name().find("hipHostRegister"), std::string::npos) << allocator->name();
  PinnedHostPoolOptions options;
  options.limit_bytes = std::size_t{8} << 20;
  auto pool = PinnedHostPool::create(options, allocator);
  ASSERT_TRUE(pool.isOk()) << pool.status().toString();

  constexpr std::size_t kBytes = std::size_t{1} << 20;
  void* device = nullptr;
  ASSERT_EQ(hipMalloc(&device, kBytes), hipSuccess);
  for (int round = 0; round < 3; ++round) {
    auto block = pool->acquire(kBytes);
    ASSERT_TRUE(block.isOk()) << block.status().toString();
    auto* bytes = static_cast<unsigned char*>(block->data());
    for (std::size_t i = 0; i < kBytes; ++i) bytes[i] = static_cast<unsigned char>((i * 31 + round) & 0xff);
    std::vector<unsigned char> expected(bytes, bytes + kBytes);
    ASSERT_EQ(hipMemcpy(device, bytes, kBytes, hipMemcpyHostToDevice), hipSuccess);
    std::memset(bytes, 0, kBytes);
    ASSERT_EQ(hipMemcpy(bytes, device, kBytes, hipMemcpyDeviceToHost), hipSuccess);
    EXPECT_EQ(std::memcmp(bytes, expected.data(), kBytes), 0) << "round " << round;
  }
  const PinnedStats stats = pool->stats();
  EXPECT_EQ(stats.acquisitions, 3u);
  EXPECT_EQ(stats.system_allocations, 1u) << "later rounds reuse the idle block";
  EXPECT_EQ(stats.reuses, 2u);
  EXPECT_EQ(stats.lock_failures, 0u) << "every block is registered with the runtime";
  // Each block is a shared-memory segment another process could map by name.
  {
    auto shared = pool->acquire(kBytes);
    ASSERT_TRUE(shared.isOk());
    EXPECT_EQ(shared->sharedName().rfind("/peerreduce-", 0), 0u) << shared->sharedName();
  }
  // More than the limit at once: the typed error, and nothing held changes.
  std::vector<PinnedBlock> held;
  for (int i = 0; i < 8; ++i) {
    auto block = pool->acquire(kBytes);
    ASSERT_TRUE(block.isOk()) << block.status().toString();
    held.push_back(std::move(block).value());
  }
  auto over = pool->acquire(kBytes);
  ASSERT_FALSE(over.isOk());
  EXPECT_EQ(over.status().code(), ErrorCode::kOutOfMemory);
  EXPECT_NE(over.status().message().find("PEERREDUCE_PINNED_LIMIT_BYTES"), std::string::npos)
      << over.status().message();
  EXPECT_EQ(pool->stats().blocks_in_use, 8u);
  ASSERT_EQ(hipFree(device), hipSuccess);
}

}  // namespace
}  // namespace peerreduce
