// The 16-bit float conversions (kernels/float16.h) as the GPU computes them, for the hardware tests to compare
// with the host's bit for bit (tests/hardware/float16_hw_test.cc): on NVIDIA devices they run as conversion
// instructions, elsewhere and on hosts as integer code, and every result must be the same.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace peerreduce::kernels {

struct Float16Conversions {
  std::vector<std::uint32_t> floats;     // fp32 bit patterns to narrow
  std::vector<std::uint16_t> to_half;    // out: floatToHalf of each
  std::vector<std::uint16_t> to_bf16;    // out: floatToBFloat16 of each
  std::vector<std::uint16_t> patterns;   // 16-bit patterns to widen
  std::vector<std::uint32_t> from_half;  // out: halfToFloat of each, as fp32 bits
  std::vector<std::uint32_t> from_bf16;  // out: bfloat16ToFloat of each
};

// Converts `c`'s inputs on the current device into its outputs (sized here); the failing call's message, or
// empty.
std::string convertFloat16OnDevice(Float16Conversions& c);

}  // namespace peerreduce::kernels
