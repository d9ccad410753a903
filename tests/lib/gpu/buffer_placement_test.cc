// User buffers must be memory of the communicator's device (gpu/buffer_placement.h): host memory and
// another GPU's memory are typed errors naming the pointer and where it lives, a range past its
// allocation is refused, and a good allocation is asked about once, then remembered.
#include "gpu/buffer_placement.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace peerreduce::gpu {
namespace {

// A fake runtime: device 2 owns [0x10000, 0x20000) and [0x40000, 0x48000), device 5 owns
// [0x30000, 0x38000), everything else is host memory; counts its calls.
int g_calls = 0;
PointerFacts fakeFacts(const void* ptr) {
  ++g_calls;
  const auto p = reinterpret_cast<std::uintptr_t>(ptr);
  if (p >= 0x10000 && p < 0x20000) return PointerFacts{2, 0x10000, 0x20000};
  if (p >= 0x40000 && p < 0x48000) return PointerFacts{2, 0, 0};  // the runtime could not say its range
  if (p >= 0x30000 && p < 0x38000) return PointerFacts{5, 0x30000, 0x38000};
  return PointerFacts{};
}

const void* at(std::uintptr_t p) { return reinterpret_cast<const void*>(p); }

void expectRefused(const Status& st, const std::string& says) {
  ASSERT_FALSE(st.isOk()) << says;
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find(says), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("rank 1"), std::string::npos) << st.message();
}

TEST(BufferPlacement, HostMemoryAndAnotherDevicesMemoryAreRefusedByName) {
  BufferPlacement placement(1, 2, fakeFacts);
  expectRefused(placement.check(at(0x90000), 64, "send buffer"), "host memory");
  expectRefused(placement.check(at(0x90000), 64, "send buffer"), "send buffer at 0x90000");
  expectRefused(placement.check(at(0x30010), 64, "receive buffer"), "memory of device 5, not of device 2");
}

TEST(BufferPlacement, ARangePastItsAllocationIsRefused) {
  BufferPlacement placement(1, 2, fakeFacts);
  expectRefused(placement.check(at(0x1ff00), 0x200, "receive buffer"), "runs past the end of its allocation");
  expectRefused(placement.check(at(~std::uintptr_t{0} - 8), 64, "send buffer"), "past the end of the address space");
}

TEST(BufferPlacement, AGoodAllocationIsAskedAboutOnceThenRemembered) {
  BufferPlacement placement(1, 2, fakeFacts);
  g_calls = 0;
  EXPECT_TRUE(placement.check(at(0x10000), 0x1000, "send buffer").isOk());
  EXPECT_EQ(g_calls, 1);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(placement.check(at(0x11000 + 16 * i), 256, "send buffer").isOk());
  EXPECT_EQ(g_calls, 1) << "the allocation is known";
  EXPECT_TRUE(placement.check(at(0x40010), 64, "send buffer").isOk()) << "device 2's, range unknown";
  EXPECT_TRUE(placement.check(at(0x40010), 64, "send buffer").isOk());
  EXPECT_EQ(g_calls, 3) << "an allocation without a known range is asked about each time";
  EXPECT_TRUE(placement.check(at(0x90000), 0, "send buffer").isOk()) << "no bytes, nothing touched";
}

}  // namespace
}  // namespace peerreduce::gpu
