// fp16/bf16 conversions: exhaustive round trips, and float -> 16-bit rounding against a reference that
// rounds by searching a table of every representable value (decoded by the independent test reference).
#include "float16.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "bit_patterns.h"
#include "reference/reference.h"

namespace peerreduce::kernels {
namespace {

using peerreduce::testing::decodeElement;
using testing::floatBits;
using testing::floatFromBits;
using testing::hex;
using testing::MismatchLog;

constexpr std::uint32_t kPatternCount16 = 1u << 16;
constexpr std::uint16_t kHalfSignBit = 0x8000;
constexpr std::uint16_t kHalfInf = 0x7c00;
constexpr std::uint16_t kHalfMantissaMask = 0x03ff;
constexpr std::uint16_t kHalfQuietBit = 0x0200;
constexpr std::uint16_t kBF16Inf = 0x7f80;
constexpr std::uint16_t kBF16MantissaMask = 0x007f;
constexpr std::uint16_t kBF16QuietBit = 0x0040;
constexpr std::uint32_t kFloat16FloatSignBit = 0x80000000u;
constexpr std::uint32_t kFloatInf = 0x7f800000u;
constexpr int kFloatMantissaBits = 23;
// fp32 mantissa bits that fp16 drops: the fp16 NaN payload is fp32 payload bits 22..13.
constexpr int kHalfPayloadShift = 13;

// rc::gen::inRange scales its range with the test size (small values first); bit patterns must be
// uniform over the whole range from the first case on, so the size is pinned to the nominal maximum.
template <typename T>
rc::Gen<T> uniformIn(T low, T high_exclusive) {
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(low, high_exclusive));
}

bool isHalfNan(std::uint16_t bits) { return (bits & kHalfInf) == kHalfInf && (bits & kHalfMantissaMask) != 0; }
bool isBF16Nan(std::uint16_t bits) { return (bits & kBF16Inf) == kBF16Inf && (bits & kBF16MantissaMask) != 0; }

double decode16(DataType dtype, std::uint16_t bits) { return decodeElement(dtype, &bits, 0); }

// Round to nearest even, computed the slow, obvious way: every non-negative finite value of the 16-bit
// format is in a sorted table indexed by its bit pattern (the encodings of non-negative values increase
// with the value), with one more entry standing for infinity at the value the next binade would start
// at (2^16 for fp16, 2^128 for bf16): IEEE overflow rounds as if the exponent range were unbounded, and
// that value's pattern is exactly the infinity pattern. A float is rounded by taking its two table
// neighbours and choosing the nearer, or on a tie the one with an even pattern (an even mantissa).
class ReferenceRounder {
 public:
  ReferenceRounder(DataType dtype, std::uint16_t inf_bits, int overflow_exponent) : inf_bits_(inf_bits) {
    values_.reserve(inf_bits + 1u);
    for (std::uint32_t bits = 0; bits < inf_bits; ++bits) {
      values_.push_back(decode16(dtype, static_cast<std::uint16_t>(bits)));
    }
    values_.push_back(std::ldexp(1.0L, overflow_exponent));
  }

  // Precondition: f is not NaN.
  std::uint16_t round(float f) const {
    const std::uint16_t sign = std::signbit(f) ? kHalfSignBit : 0;
    const long double magnitude = std::fabs(static_cast<long double>(f));
    if (magnitude >= values_.back()) return static_cast<std::uint16_t>(sign | inf_bits_);
    const auto above = std::lower_bound(values_.begin(), values_.end(), magnitude);
    const auto hi = static_cast<std::uint32_t>(above - values_.begin());
    if (*above == magnitude) return static_cast<std::uint16_t>(sign | hi);
    const std::uint32_t lo = hi - 1;  // magnitude > 0 = values_[0], so hi >= 1
    // Both differences are exact in long double: the operands are close and have short significands.
    const long double below_gap = magnitude - values_[lo];
    const long double above_gap = values_[hi] - magnitude;
    std::uint32_t chosen;
    if (below_gap < above_gap) {
      chosen = lo;
    } else if (above_gap < below_gap) {
      chosen = hi;
    } else {
      chosen = (lo % 2 == 0) ? lo : hi;
    }
    return static_cast<std::uint16_t>(sign | chosen);
  }

  // The float exactly halfway between pattern `bits` and the next one up (exact in fp32: one more bit).
  float midpointAbove(std::uint16_t bits) const { return static_cast<float>((values_[bits] + values_[bits + 1u]) / 2); }

 private:
  std::uint16_t inf_bits_;
  std::vector<long double> values_;
};

// fp16's largest finite value is (2 - 2^-10) * 2^15; the next binade would start at 2^16.
constexpr int kHalfOverflowExponent = 16;
// bf16's largest finite value is (2 - 2^-7) * 2^127; the next binade would start at 2^128.
constexpr int kBF16OverflowExponent = 128;

const ReferenceRounder& halfRounder() {
  static const ReferenceRounder rounder(DataType::kFloat16, kHalfInf, kHalfOverflowExponent);
  return rounder;
}

const ReferenceRounder& bf16Rounder() {
  static const ReferenceRounder rounder(DataType::kBFloat16, kBF16Inf, kBF16OverflowExponent);
  return rounder;
}

// What a NaN must become: the sign kept, the quiet bit set, the top payload bits kept.
std::uint16_t expectedHalfNan(std::uint32_t float_bits) {
  const auto sign = static_cast<std::uint16_t>((float_bits & kFloat16FloatSignBit) >> 16);
  const auto payload = static_cast<std::uint16_t>((float_bits >> kHalfPayloadShift) & kHalfMantissaMask);
  return static_cast<std::uint16_t>(sign | kHalfInf | kHalfQuietBit | payload);
}

std::uint16_t expectedBF16Nan(std::uint32_t float_bits) {
  return static_cast<std::uint16_t>((float_bits >> 16) | kBF16QuietBit);
}

// Checks both conversions of one float against the references; "" when right.
std::string checkFloatRounding(std::uint32_t bits) {
  const float f = floatFromBits(bits);
  const std::uint16_t half = floatToHalf(f).bits;
  const std::uint16_t bf16 = floatToBFloat16(f).bits;
  const std::uint16_t want_half = std::isnan(f) ? expectedHalfNan(bits) : halfRounder().round(f);
  const std::uint16_t want_bf16 = std::isnan(f) ? expectedBF16Nan(bits) : bf16Rounder().round(f);
  std::string error;
  if (half != want_half) error += "floatToHalf(" + hex(bits) + ") = " + hex(half) + ", want " + hex(want_half) + "; ";
  if (bf16 != want_bf16) {
    error += "floatToBFloat16(" + hex(bits) + ") = " + hex(bf16) + ", want " + hex(want_bf16);
  }
  return error;
}

TEST(Float16, EveryHalfPatternRoundTripsThroughFloat) {
  MismatchLog log;
  for (std::uint32_t pattern = 0; pattern < kPatternCount16; ++pattern) {
    const auto bits = static_cast<std::uint16_t>(pattern);
    const float widened = halfToFloat(Half{bits});
    const std::uint16_t back = floatToHalf(widened).bits;
    if (isHalfNan(bits)) {
      // Widening keeps sign and payload bit for bit; narrowing then sets the quiet bit.
      const std::uint32_t want_float = (static_cast<std::uint32_t>(bits & kHalfSignBit) << 16) | kFloatInf |
                                       (static_cast<std::uint32_t>(bits & kHalfMantissaMask) << kHalfPayloadShift);
      if (!std::isnan(widened) || floatBits(widened) != want_float || back != (bits | kHalfQuietBit)) {
        log.add("NaN " + hex(bits) + " -> " + hex(floatBits(widened)) + " -> " + hex(back));
      }
      continue;
    }
    const double want = decode16(DataType::kFloat16, bits);
    if (back != bits || static_cast<double>(widened) != want || std::signbit(widened) != std::signbit(want)) {
      log.add(hex(bits) + " -> " + std::to_string(widened) + " (reference " + std::to_string(want) + ") -> " +
              hex(back));
    }
  }
  EXPECT_EQ(log.count(), 0) << log.text();
}

TEST(Float16, EveryBFloat16PatternRoundTripsThroughFloat) {
  MismatchLog log;
  for (std::uint32_t pattern = 0; pattern < kPatternCount16; ++pattern) {
    const auto bits = static_cast<std::uint16_t>(pattern);
    const float widened = bfloat16ToFloat(BFloat16{bits});
    const std::uint16_t back = floatToBFloat16(widened).bits;
    if (isBF16Nan(bits)) {
      if (!std::isnan(widened) || floatBits(widened) != static_cast<std::uint32_t>(bits) << 16 ||
          back != (bits | kBF16QuietBit)) {
        log.add("NaN " + hex(bits) + " -> " + hex(floatBits(widened)) + " -> " + hex(back));
      }
      continue;
    }
    const double want = decode16(DataType::kBFloat16, bits);
    if (back != bits || static_cast<double>(widened) != want || std::signbit(widened) != std::signbit(want)) {
      log.add(hex(bits) + " -> " + hex(floatBits(widened)) + " -> " + hex(back));
    }
  }
  EXPECT_EQ(log.count(), 0) << log.text();
}

// A deterministic sweep over 2^32 / kSweepStride floats spread over every exponent, sign and NaN.
// The stride is odd and prime, so the low mantissa bits (which decide rounding) vary too.
constexpr std::uint32_t kSweepStride = 4099;

TEST(Float16, StridedSweepOfAllFloatsRoundsLikeReference) {
  MismatchLog log;
  for (std::uint64_t bits = 0; bits <= std::numeric_limits<std::uint32_t>::max(); bits += kSweepStride) {
    const std::string error = checkFloatRounding(static_cast<std::uint32_t>(bits));
    if (!error.empty()) log.add(error);
  }
  EXPECT_EQ(log.count(), 0) << log.text();
}

// Any float: all signs, exponents (including float subnormals, inf and NaN) and mantissas, uniformly.
RC_GTEST_PROP(Float16, RandomFloatBitsRoundLikeReference, ()) {
  const auto sign = *uniformIn<std::uint32_t>(0, 2);
  const auto exponent = *uniformIn<std::uint32_t>(0, 256);
  const auto mantissa = *uniformIn<std::uint32_t>(0, 1u << kFloatMantissaBits);
  const std::uint32_t bits = (sign << 31) | (exponent << kFloatMantissaBits) | mantissa;
  const std::string error = checkFloatRounding(bits);
  RC_ASSERT(error == "");
}

// fp32 biased exponents 95..145 cover fp16's whole range: below its subnormals (2^-32), the subnormals,
// normals, and past its overflow (2^18).
constexpr std::uint32_t kHalfRangeExponentLow = 95;
constexpr std::uint32_t kHalfRangeExponentHigh = 146;

RC_GTEST_PROP(Float16, FloatsInTheHalfRangeRoundLikeReference, ()) {
  const auto sign = *uniformIn<std::uint32_t>(0, 2);
  const auto exponent = *uniformIn<std::uint32_t>(kHalfRangeExponentLow, kHalfRangeExponentHigh);
  const auto mantissa = *uniformIn<std::uint32_t>(0, 1u << kFloatMantissaBits);
  const std::uint32_t bits = (sign << 31) | (exponent << kFloatMantissaBits) | mantissa;
  const std::string error = checkFloatRounding(bits);
  RC_ASSERT(error == "");
}

// Exact ties between two neighbouring 16-bit values (including largest-finite/infinity and the
// subnormals), and the floats one ulp either side of them.
RC_GTEST_PROP(Float16, TiesAndNearTiesRoundLikeReference, ()) {
  const auto half_bits = *uniformIn<std::uint32_t>(0, kHalfInf);
  const auto bf16_bits = *uniformIn<std::uint32_t>(0, kBF16Inf);
  const bool negative = *rc::gen::arbitrary<bool>();
  for (const float tie : {halfRounder().midpointAbove(static_cast<std::uint16_t>(half_bits)),
                          bf16Rounder().midpointAbove(static_cast<std::uint16_t>(bf16_bits))}) {
    const float signed_tie = negative ? -tie : tie;
    for (const float f : {signed_tie, std::nextafter(signed_tie, 0.0f),
                          std::nextafter(signed_tie, std::numeric_limits<float>::infinity()),
                          std::nextafter(signed_tie, -std::numeric_limits<float>::infinity())}) {
      const std::string error = checkFloatRounding(floatBits(f));
      RC_ASSERT(error == "");
    }
  }
}

struct Edge {
  float input;
  std::uint16_t want;
  const char* why;
};

TEST(Float16, FloatToHalfNamedEdgeCases) {
  const float kInf = std::numeric_limits<float>::infinity();
  const Edge edges[] = {
      {0.0f, 0x0000, "+0"},
      {-0.0f, 0x8000, "-0 keeps its sign"},
      {1.0f, 0x3c00, "one"},
      {-2.0f, 0xc000, "minus two"},
      {0.1f, 0x2e66, "0.1 rounds down"},
      {65504.0f, 0x7bff, "largest finite"},
      {std::nextafter(65520.0f, 0.0f), 0x7bff, "just below the overflow tie stays finite"},
      {65520.0f, 0x7c00, "tie between largest finite (odd) and 2^16: to even, infinity"},
      {-65520.0f, 0xfc00, "negative overflow tie"},
      {65536.0f, 0x7c00, "2^16 overflows"},
      {std::numeric_limits<float>::max(), 0x7c00, "FLT_MAX overflows"},
      {kInf, 0x7c00, "+inf"},
      {-kInf, 0xfc00, "-inf"},
      {std::ldexp(1.0f, -14), 0x0400, "smallest normal"},
      {std::ldexp(1.0f, -24), 0x0001, "smallest subnormal"},
      {std::ldexp(1.0f, -25), 0x0000, "half the smallest subnormal: tie to even, zero"},
      {-std::ldexp(1.0f, -25), 0x8000, "negative tie to zero keeps the sign"},
      {std::nextafter(std::ldexp(1.0f, -25), 1.0f), 0x0001, "just above half the smallest subnormal"},
      {std::ldexp(1.0f, -26), 0x0000, "a quarter of the smallest subnormal"},
      {std::numeric_limits<float>::denorm_min(), 0x0000, "fp32 subnormal"},
      {std::ldexp(3.0f, -25), 0x0002, "1.5 subnormal ulps: tie to even, 2"},
      {std::ldexp(5.0f, -25), 0x0002, "2.5 subnormal ulps: tie to even, 2"},
      {std::ldexp(1023.0f, -24), 0x03ff, "largest subnormal"},
      {std::ldexp(2047.0f, -25), 0x0400, "tie above the largest subnormal carries into the smallest normal"},
      {1.0f + std::ldexp(1.0f, -11), 0x3c00, "tie above one: to even, one"},
      {1.0f + std::ldexp(3.0f, -11), 0x3c02, "tie above 1+ulp (odd): up"},
      {2.0f - std::ldexp(1.0f, -11), 0x4000, "tie below two carries into the exponent"},
      {std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f), 0x3c01, "just above a tie rounds up"},
      {floatFromBits(0x7fc00000u), 0x7e00, "quiet NaN"},
      {floatFromBits(0xffc00000u), 0xfe00, "negative quiet NaN keeps its sign"},
      {floatFromBits(0x7f800001u), 0x7e00, "signalling NaN whose payload is below fp16's: still NaN, quiet"},
      {floatFromBits(0x7fa00000u), 0x7f00, "signalling NaN: quiet bit set, top payload bit kept"},
  };
  for (const Edge& edge : edges) {
    EXPECT_EQ(floatToHalf(edge.input).bits, edge.want)
        << edge.why << " (input bits " << hex(floatBits(edge.input)) << ")";
  }
}

TEST(Float16, FloatToBFloat16NamedEdgeCases) {
  const float kInf = std::numeric_limits<float>::infinity();
  const Edge edges[] = {
      {0.0f, 0x0000, "+0"},
      {-0.0f, 0x8000, "-0 keeps its sign"},
      {1.0f, 0x3f80, "one"},
      {1.0f + std::ldexp(1.0f, -8), 0x3f80, "tie above one: to even, one"},
      {1.0f + std::ldexp(3.0f, -8), 0x3f82, "tie above 1+ulp (odd): up"},
      {2.0f - std::ldexp(1.0f, -8), 0x4000, "tie below two carries into the exponent"},
      {floatFromBits(0x7f7f0000u), 0x7f7f, "largest finite"},
      {floatFromBits(0x7f7f7fffu), 0x7f7f, "just below the overflow tie"},
      {floatFromBits(0x7f7f8000u), 0x7f80, "overflow tie: to even, infinity"},
      {std::numeric_limits<float>::max(), 0x7f80, "FLT_MAX rounds to infinity"},
      {-std::numeric_limits<float>::max(), 0xff80, "-FLT_MAX rounds to -infinity"},
      {kInf, 0x7f80, "+inf"},
      {-kInf, 0xff80, "-inf"},
      {floatFromBits(0x00010000u), 0x0001, "smallest bf16 subnormal"},
      {floatFromBits(0x00008000u), 0x0000, "half the smallest subnormal: tie to even, zero"},
      {floatFromBits(0x80008000u), 0x8000, "negative tie to zero keeps the sign"},
      {floatFromBits(0x00008001u), 0x0001, "just above half the smallest subnormal"},
      {floatFromBits(0x00018000u), 0x0002, "1.5 subnormal ulps: tie to even, 2"},
      {floatFromBits(0x007fffffu), 0x0080, "largest fp32 subnormal carries into the smallest normal"},
      {floatFromBits(0x00000001u), 0x0000, "fp32 denorm_min"},
      {floatFromBits(0x7fc00000u), 0x7fc0, "quiet NaN"},
      {floatFromBits(0x7f800001u), 0x7fc0, "signalling NaN with a low payload: still NaN, quiet"},
      {floatFromBits(0xff810000u), 0xffc1, "signalling NaN: sign and top payload kept, quiet bit set"},
  };
  for (const Edge& edge : edges) {
    EXPECT_EQ(floatToBFloat16(edge.input).bits, edge.want)
        << edge.why << " (input bits " << hex(floatBits(edge.input)) << ")";
  }
}

TEST(Float16, ReferenceRounderAgreesWithNamedValues) {
  // The test's own reference must be right too, or the sweeps above prove nothing.
  EXPECT_EQ(halfRounder().round(65520.0f), 0x7c00);
  EXPECT_EQ(halfRounder().round(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(halfRounder().round(std::ldexp(3.0f, -25)), 0x0002);
  EXPECT_EQ(halfRounder().round(0.1f), 0x2e66);
  EXPECT_EQ(bf16Rounder().round(floatFromBits(0x7f7f8000u)), 0x7f80);
  EXPECT_EQ(bf16Rounder().round(1.0f + std::ldexp(3.0f, -8)), 0x3f82);
}

}  // namespace
}  // namespace peerreduce::kernels
