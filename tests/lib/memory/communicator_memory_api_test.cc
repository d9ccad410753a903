// The Communicator's memory API beyond the pool statistics: the pinned host pool's statistics and
// limit, and SymmetricBlock's bounds-checked view of this rank's bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "peerreduce/communicator.h"
#include "peerreduce/simulator.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kCommunicatorMemoryApiMiB = std::size_t{1} << 20;

Config smallMemoryConfig() {
  Config config;
  config.scratch_bytes = 1 * kCommunicatorMemoryApiMiB;
  config.memory.pool_bytes = 4 * kCommunicatorMemoryApiMiB;
  config.memory.pinned_limit_bytes = 8 * kCommunicatorMemoryApiMiB;
  return config;
}

// Hides the region's address, as a transport over device memory would.
class DeviceMemoryTransport : public TransportWrapper {
 public:
  using TransportWrapper::TransportWrapper;
  StatusOr<OpenedRegion> openSymmetric(std::size_t bytes) override {
    PR_ASSIGN_OR_RETURN(OpenedRegion opened, TransportWrapper::openSymmetric(bytes));
    opened.host_address = nullptr;
    return opened;
  }
};

std::vector<std::unique_ptr<Communicator>> makeComms(sim::SimWorld& world, const Config& config, bool hide_region) {
  const int n = world.worldSize();
  std::vector<std::unique_ptr<Communicator>> comms(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      std::shared_ptr<Transport> transport = world.transport(r);
      if (hide_region) transport = std::make_shared<DeviceMemoryTransport>(transport);
      auto comm = Communicator::create(r, n, world.bootstrap(r), transport, config);
      EXPECT_TRUE(comm.isOk()) << comm.status().toString();
      if (comm.isOk()) comms[static_cast<std::size_t>(r)] = std::move(comm).value();
    });
  }
  for (auto& t : threads) t.join();
  return comms;
}

TEST(CommunicatorPinned, StatsCarryTheConfiguredLimitOnEveryRank) {
  auto world = sim::SimWorld::create(2, {}).value();
  auto comms = makeComms(*world, smallMemoryConfig(), false);
  for (const auto& comm : comms) {
    ASSERT_NE(comm, nullptr);
    const PinnedStats stats = comm->pinnedStats();
    EXPECT_EQ(stats.limit_bytes, 8 * kCommunicatorMemoryApiMiB);
    // Nothing is pinned until a host-staged path asks: creation takes no pinned memory.
    EXPECT_EQ(stats.bytes_pinned, 0u);
    EXPECT_EQ(stats.acquisitions, 0u);
    EXPECT_EQ(stats.failures, 0u);
  }
}

TEST(CommunicatorPinned, DefaultLimitIsTheDocumentedOne) {
  auto world = sim::SimWorld::create(1, {}).value();
  Config config = smallMemoryConfig();
  config.memory.pinned_limit_bytes = kDefaultPinnedLimitBytes;
  auto comms = makeComms(*world, config, false);
  ASSERT_NE(comms[0], nullptr);
  EXPECT_EQ(comms[0]->pinnedStats().limit_bytes, std::uint64_t{256} * kCommunicatorMemoryApiMiB);
}

TEST(SymmetricBlockBytes, ReachThisRanksRegionAtTheBlockOffset) {
  auto world = sim::SimWorld::create(2, {}).value();
  auto comms = makeComms(*world, smallMemoryConfig(), false);
  for (int r = 0; r < 2; ++r) {
    const auto& comm = comms[static_cast<std::size_t>(r)];
    ASSERT_NE(comm, nullptr);
    auto block = comm->allocateSymmetric(1000);  // rounded up to 1008
    ASSERT_TRUE(block.isOk()) << block.status().toString();
    ASSERT_NE(block->data(), nullptr);
    EXPECT_EQ(block->data(), world->hostRegion(r) + block->offset());
    auto all = block->bytes(0, block->size());
    ASSERT_TRUE(all.isOk()) << all.status().toString();
    EXPECT_EQ(all->data(), block->data());
    EXPECT_EQ(all->size(), 1008u);
    std::memset(all->data(), 0x5A, all->size());  // ASan: the whole block is addressable
    auto tail = block->bytes(1000, 8);
    ASSERT_TRUE(tail.isOk());
    EXPECT_EQ(std::to_integer<int>((*tail)[7]), 0x5A);
    EXPECT_TRUE(block->bytes(1008, 0).isOk());
    // Ranges leaving the block, overflow included.
    for (auto [offset, length] : {std::pair<std::size_t, std::size_t>{1008, 1}, {1000, 9}, {1009, 0}, {8, SIZE_MAX}}) {
      auto bad = block->bytes(offset, length);
      EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument) << offset << "+" << length;
      EXPECT_NE(bad.status().message().find("leaves the block of 1008 bytes"), std::string::npos)
          << bad.status().toString();
    }
    SymmetricBlock copy = *block;
    copy.reset();
    EXPECT_EQ(copy.data(), nullptr);
    EXPECT_EQ(copy.bytes(0, 1).status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(copy.bytes(0, 1).status().message().find("empty"), std::string::npos);
  }
}

TEST(SymmetricBlockBytes, UnsupportedWhereTheRegionIsNotHostAddressable) {
  auto world = sim::SimWorld::create(2, {}).value();
  auto comms = makeComms(*world, smallMemoryConfig(), true);
  ASSERT_NE(comms[0], nullptr);
  auto block = comms[0]->allocateSymmetric(256);
  ASSERT_TRUE(block.isOk()) << block.status().toString();
  EXPECT_EQ(block->data(), nullptr);
  auto view = block->bytes(0, 16);
  EXPECT_EQ(view.status().code(), ErrorCode::kUnsupported) << view.status().toString();
  EXPECT_NE(view.status().message().find("not host-addressable"), std::string::npos);
  // Bounds are still checked first: a bad range is the caller's error wherever the memory is.
  EXPECT_EQ(block->bytes(0, 257).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace peerreduce::testing
