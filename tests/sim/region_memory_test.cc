// RegionMemory (sim/region_memory.h): a simulated rank's region, mapped zeroed from the OS, unmapped once.
#include "region_memory.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <utility>

namespace peerreduce::sim {
namespace {

TEST(RegionMemory, MapsZeroedWritableMemoryAndUnmapsItOnce) {
  constexpr std::size_t kBytes = std::size_t{3} << 20;
  RegionMemory region = RegionMemory::map(kBytes);
  ASSERT_TRUE(region);
  EXPECT_EQ(region.get()[0], std::byte{0});
  EXPECT_EQ(region.get()[kBytes - 1], std::byte{0});
  region.get()[kBytes / 2] = std::byte{0x5a};
  EXPECT_EQ(region.get()[kBytes / 2], std::byte{0x5a});

  // Moving hands the mapping over; the source is left empty and unmaps nothing.
  std::byte* const base = region.get();
  RegionMemory moved(std::move(region));
  EXPECT_FALSE(region);  // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
  EXPECT_EQ(moved.get(), base);
  RegionMemory assigned;
  assigned = std::move(moved);
  EXPECT_EQ(assigned.get(), base);
  EXPECT_EQ(assigned.get()[kBytes / 2], std::byte{0x5a});
  assigned.reset();
  EXPECT_FALSE(assigned);
  EXPECT_EQ(assigned.get(), nullptr);
  assigned.reset();  // a second reset is harmless
}

TEST(RegionMemory, ARefusedMappingIsEmptyNotACrash) {
  EXPECT_FALSE(RegionMemory::map(0));
  // More address space than a process has: the OS refuses, and the caller sees an empty region (the engine
  // turns that into kOutOfMemory naming PEERREDUCE_POOL_BYTES).
  EXPECT_FALSE(RegionMemory::map(std::numeric_limits<std::size_t>::max() - 4095));
}

}  // namespace
}  // namespace peerreduce::sim
