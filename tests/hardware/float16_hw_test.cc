// Hardware-only: the 16-bit float conversions as the GPU computes them (kernels/conversion_check.h; on NVIDIA
// devices conversion instructions, NaNs by integer code) are the host's bit for bit: every 16-bit pattern
// widened, and every fp32 pattern whose low half is one of the values around both formats' rounding points
// narrowed (ties, one either side, the largest and smallest low halves), so every exponent, subnormals,
// infinities and NaNs included, is crossed with every rounding case.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "conversion_check.h"
#include "float16.h"

namespace peerreduce::kernels {
namespace {

TEST(DeviceConversions, Float16AndBFloat16AreTheHostsBitForBit) {
  Float16Conversions c;
  // fp16 keeps 10 of fp32's 23 mantissa bits (13 dropped: a tie is 0x1000); bf16 keeps 7 (16 dropped: 0x8000).
  const std::uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x2000, 0x3000, 0x7fff, 0x8000, 0x8001, 0xffff};
  for (std::uint32_t high = 0; high <= 0xffff; ++high) {
    for (const std::uint32_t low : lows) c.floats.push_back(high << 16 | low);
  }
  for (std::uint32_t pattern = 0; pattern <= 0xffff; ++pattern)
    c.patterns.push_back(static_cast<std::uint16_t>(pattern));
  const std::string failure = convertFloat16OnDevice(c);
  ASSERT_EQ(failure, "");
  int mismatches = 0;
  for (std::size_t i = 0; i < c.floats.size() && mismatches < 10; ++i) {
    const float f = bitCast<float>(c.floats[i]);
    if (c.to_half[i] != floatToHalf(f).bits || c.to_bf16[i] != floatToBFloat16(f).bits) {
      ++mismatches;
      ADD_FAILURE() << "fp32 0x" << std::hex << c.floats[i] << ": device fp16 0x" << c.to_half[i] << " host 0x"
                    << floatToHalf(f).bits << ", device bf16 0x" << c.to_bf16[i] << " host 0x"
                    << floatToBFloat16(f).bits;
    }
  }
  for (std::size_t i = 0; i < c.patterns.size() && mismatches < 20; ++i) {
    const std::uint32_t half = bitCast<std::uint32_t>(halfToFloat(Half{c.patterns[i]}));
    const std::uint32_t bf16 = bitCast<std::uint32_t>(bfloat16ToFloat(BFloat16{c.patterns[i]}));
    if (c.from_half[i] != half || c.from_bf16[i] != bf16) {
      ++mismatches;
      ADD_FAILURE() << "16-bit 0x" << std::hex << c.patterns[i] << ": device from fp16 0x" << c.from_half[i]
                    << " host 0x" << half << ", device from bf16 0x" << c.from_bf16[i] << " host 0x" << bf16;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace peerreduce::kernels
