// The 8-bit floats (float8.h, NCCL's ncclFloat8e4m3 and ncclFloat8e5m2): every pattern decoded against the
// independent test reference and round-tripped, float -> fp8 rounding against a reference that rounds by
// searching a table of every representable value (ties to even, e4m3 saturating, e5m2 overflowing to
// infinity), and every pairwise reduction of two fp8 values (sum, prod, min, max, avg) against the exact
// result computed in double and rounded once, through reduceElements and hostReduce alike.
#include "float8.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "bit_patterns.h"
#include "dispatch.h"
#include "host_reduce.h"
#include "reduce_ops.h"
#include "reference/reference.h"

namespace peerreduce::kernels {
namespace {

using peerreduce::testing::decodeElement;
using testing::floatBits;
using testing::floatFromBits;
using testing::hex;
using testing::MismatchLog;

constexpr int kPatternCount8 = 256;
constexpr std::uint8_t kSignBit = 0x80;
constexpr std::uint8_t kMagnitudeMask = 0x7f;
constexpr std::uint32_t kFloat8FloatSignBit = 0x80000000u;

// What the tests need to know of a format, written down from the OCP specification rather than taken from
// float8.h.
struct Fp8Format {
  DataType dtype;
  std::uint8_t max_finite;     // magnitude pattern of the largest finite value
  double max_value;            // its value
  std::uint8_t overflow_bits;  // what an overflowing magnitude becomes: e4m3 saturates, e5m2 is infinity
  double beyond_max;           // the value the next pattern would have with an unbounded exponent
  bool has_inf;
};

constexpr Fp8Format kE4M3 = {DataType::kFloat8E4M3, 0x7e, 448.0, 0x7e, 480.0, false};
constexpr Fp8Format kE5M2 = {DataType::kFloat8E5M2, 0x7b, 57344.0, 0x7c, 65536.0, true};

template <typename F8>
constexpr const Fp8Format& formatOf() {
  if constexpr (std::is_same_v<F8, Float8E4M3>) {
    return kE4M3;
  } else {
    return kE5M2;
  }
}

double referenceDecode(const Fp8Format& format, std::uint8_t bits) { return decodeElement(format.dtype, &bits, 0); }

bool isNanPattern(const Fp8Format& format, std::uint8_t bits) { return std::isnan(referenceDecode(format, bits)); }

// Round to nearest even, the slow obvious way: the non-negative finite values of the format sorted by their
// pattern (the encodings of non-negative values increase with the value), plus one entry for the value the
// next pattern would have if the exponent range went on (480 for e4m3, 2^16 for e5m2). A magnitude is rounded
// by taking its two table neighbours and choosing the nearer, or on a tie the even pattern; landing on (or
// beyond) the extra entry is an overflow, which e4m3 saturates and e5m2 makes infinite.
class Fp8ReferenceRounder {
 public:
  explicit Fp8ReferenceRounder(const Fp8Format& format) : format_(format) {
    for (int bits = 0; bits <= format.max_finite; ++bits) {
      values_.push_back(referenceDecode(format, static_cast<std::uint8_t>(bits)));
    }
    values_.push_back(format.beyond_max);
  }

  // Precondition: x is not NaN. Exact for every double the tests give it (no double rounding: the table
  // lookup compares the double itself).
  std::uint8_t round(double x) const {
    const std::uint8_t sign = std::signbit(x) ? kSignBit : 0;
    const double magnitude = std::fabs(x);
    const auto overflow = static_cast<std::uint8_t>(sign | format_.overflow_bits);
    if (magnitude >= values_.back()) return overflow;
    const auto above = std::lower_bound(values_.begin(), values_.end(), magnitude);
    const auto hi = static_cast<std::size_t>(above - values_.begin());
    std::size_t chosen = hi;
    if (*above != magnitude) {
      const std::size_t lo = hi - 1;  // magnitude > 0 = values_[0]
      const double below_gap = magnitude - values_[lo];
      const double above_gap = values_[hi] - magnitude;
      if (below_gap < above_gap) {
        chosen = lo;
      } else if (below_gap == above_gap) {
        chosen = lo % 2 == 0 ? lo : hi;
      }
    }
    if (chosen == values_.size() - 1) return overflow;
    return static_cast<std::uint8_t>(sign | chosen);
  }

  // The value halfway between magnitude pattern `bits` and the next one up (the extra entry included).
  double midpointAbove(std::uint8_t bits) const { return (values_[bits] + values_[bits + 1u]) / 2; }

 private:
  Fp8Format format_;
  std::vector<double> values_;
};

template <typename F8>
const Fp8ReferenceRounder& rounderOf() {
  static const Fp8ReferenceRounder rounder(formatOf<F8>());
  return rounder;
}

template <typename F8>
std::uint8_t narrowBits(float f) {
  return floatToFloat8<F8>(f).bits;
}

// What a float NaN must become: e4m3's NaN of its sign; e5m2's quiet NaN keeping the top payload bit.
template <typename F8>
std::uint8_t expectedNan(std::uint32_t float_bits) {
  const auto sign = static_cast<std::uint8_t>((float_bits & kFloat8FloatSignBit) >> 24);
  if constexpr (std::is_same_v<F8, Float8E4M3>) {
    return static_cast<std::uint8_t>(sign | 0x7f);
  } else {
    return static_cast<std::uint8_t>(sign | 0x7e | ((float_bits >> 21) & 1u));
  }
}

// The kernels' tests link no lib/ code, so the names are spelled here.
const char* opText(ReduceOp op) {
  constexpr const char* kNames[] = {"sum", "prod", "min", "max", "avg"};
  return kNames[static_cast<int>(op)];
}

const char* formatName(const Fp8Format& format) { return format.has_inf ? "fp8e5m2" : "fp8e4m3"; }

// ---- every pattern ----

template <typename F8>
void checkEveryPatternWidensExactlyAndRoundTrips() {
  const Fp8Format& format = formatOf<F8>();
  MismatchLog log;
  for (int pattern = 0; pattern < kPatternCount8; ++pattern) {
    const auto bits = static_cast<std::uint8_t>(pattern);
    const float widened = float8ToFloat(F8{bits});
    const std::uint8_t back = narrowBits<F8>(widened);
    const double want = referenceDecode(format, bits);
    if (std::isnan(want)) {
      // NaN widens to a NaN of the same sign; narrowing gives the same pattern back, except e5m2's signalling
      // NaNs (S.11111.01), which come back quiet (S.11111.11).
      const bool signalling = format.has_inf && (bits & kMagnitudeMask) == 0x7d;
      const std::uint8_t want_back = signalling ? static_cast<std::uint8_t>(bits | 0x02) : bits;
      if (!std::isnan(widened) || std::signbit(widened) != ((bits & kSignBit) != 0) || back != want_back) {
        log.add("NaN " + hex(bits) + " -> " + hex(floatBits(widened)) + " -> " + hex(back));
      }
      continue;
    }
    if (static_cast<double>(widened) != want || std::signbit(widened) != std::signbit(want) || back != bits) {
      log.add(hex(bits) + " -> " + std::to_string(widened) + " (reference " + std::to_string(want) + ") -> " +
              hex(back));
    }
  }
  EXPECT_EQ(log.count(), 0) << log.text();
}

TEST(Float8, EveryE4M3PatternWidensToItsValueAndRoundTrips) {
  checkEveryPatternWidensExactlyAndRoundTrips<Float8E4M3>();
}

TEST(Float8, EveryE5M2PatternWidensToItsValueAndRoundTrips) {
  checkEveryPatternWidensExactlyAndRoundTrips<Float8E5M2>();
}

TEST(Float8, TheFormatsLandmarks) {
  // e4m3: max 448 (0x7e), the all-ones exponent holds normals (0x78 = 256), the only NaN is S.1111.111,
  // smallest normal 2^-6 (0x08), smallest subnormal 2^-9 (0x01).
  EXPECT_EQ(float8E4M3ToFloat(Float8E4M3{0x7e}), 448.0f);
  EXPECT_EQ(float8E4M3ToFloat(Float8E4M3{0x78}), 256.0f);
  EXPECT_TRUE(std::isnan(float8E4M3ToFloat(Float8E4M3{0x7f})));
  EXPECT_TRUE(std::isnan(float8E4M3ToFloat(Float8E4M3{0xff})));
  EXPECT_EQ(float8E4M3ToFloat(Float8E4M3{0x08}), std::ldexp(1.0f, -6));
  EXPECT_EQ(float8E4M3ToFloat(Float8E4M3{0x01}), std::ldexp(1.0f, -9));
  EXPECT_EQ(float8E4M3ToFloat(Float8E4M3{0x38}), 1.0f);  // bias 7
  // e5m2: max 57344 (0x7b), infinity 0x7c, NaN above it, smallest normal 2^-14, smallest subnormal 2^-16.
  EXPECT_EQ(float8E5M2ToFloat(Float8E5M2{0x7b}), 57344.0f);
  EXPECT_EQ(float8E5M2ToFloat(Float8E5M2{0x7c}), std::numeric_limits<float>::infinity());
  EXPECT_EQ(float8E5M2ToFloat(Float8E5M2{0xfc}), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(float8E5M2ToFloat(Float8E5M2{0x7d})));
  EXPECT_EQ(float8E5M2ToFloat(Float8E5M2{0x04}), std::ldexp(1.0f, -14));
  EXPECT_EQ(float8E5M2ToFloat(Float8E5M2{0x01}), std::ldexp(1.0f, -16));
  EXPECT_EQ(float8E5M2ToFloat(Float8E5M2{0x3c}), 1.0f);  // bias 15
  EXPECT_TRUE(std::signbit(float8E4M3ToFloat(Float8E4M3{0x80})));
  EXPECT_TRUE(std::signbit(float8E5M2ToFloat(Float8E5M2{0x80})));
}

// ---- float -> fp8 rounding ----

template <typename F8>
std::string checkRounding(std::uint32_t float_bits) {
  const float f = floatFromBits(float_bits);
  const std::uint8_t got = narrowBits<F8>(f);
  const std::uint8_t want = std::isnan(f) ? expectedNan<F8>(float_bits) : rounderOf<F8>().round(f);
  if (got == want) return "";
  return "narrow(" + hex(float_bits) + " = " + std::to_string(f) + ") = " + hex(got) + ", want " + hex(want);
}

template <typename F8>
void checkEveryMidpointAndItsNeighbours() {
  const Fp8Format& format = formatOf<F8>();
  MismatchLog log;
  // Between every two adjacent non-negative values, and between the largest and the overflow value: the tie
  // itself (exact in fp32, which has far more bits) and the floats just below and above it, in both signs.
  for (int bits = 0; bits <= format.max_finite; ++bits) {
    const auto mid = static_cast<float>(rounderOf<F8>().midpointAbove(static_cast<std::uint8_t>(bits)));
    for (const float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, std::numeric_limits<float>::max())}) {
      for (const float signed_f : {f, -f}) {
        const std::string error = checkRounding<F8>(floatBits(signed_f));
        if (!error.empty()) log.add(error);
      }
    }
  }
  EXPECT_EQ(log.count(), 0) << log.text();
}

TEST(Float8, E4M3TiesGoToEvenAndNeighboursToTheNearer) { checkEveryMidpointAndItsNeighbours<Float8E4M3>(); }

TEST(Float8, E5M2TiesGoToEvenAndNeighboursToTheNearer) { checkEveryMidpointAndItsNeighbours<Float8E5M2>(); }

TEST(Float8, E4M3SaturatesAtItsLargestFiniteValue) {
  EXPECT_EQ(floatToFloat8E4M3(448.0f).bits, 0x7e);
  EXPECT_EQ(floatToFloat8E4M3(464.0f).bits, 0x7e);  // halfway to 480: the tie goes to the even 448
  EXPECT_EQ(floatToFloat8E4M3(std::nextafter(464.0f, 1e9f)).bits, 0x7e);  // would round to 480: saturates
  EXPECT_EQ(floatToFloat8E4M3(1e30f).bits, 0x7e);
  EXPECT_EQ(floatToFloat8E4M3(-1e30f).bits, 0xfe);
  EXPECT_EQ(floatToFloat8E4M3(std::numeric_limits<float>::infinity()).bits, 0x7e);  // no infinity: saturated
  EXPECT_EQ(floatToFloat8E4M3(-std::numeric_limits<float>::infinity()).bits, 0xfe);
  EXPECT_EQ(floatToFloat8E4M3(std::numeric_limits<float>::max()).bits, 0x7e);
}

TEST(Float8, E5M2OverflowsToInfinityAsIeeeDoes) {
  EXPECT_EQ(floatToFloat8E5M2(57344.0f).bits, 0x7b);
  EXPECT_EQ(floatToFloat8E5M2(std::nextafter(61440.0f, 0.0f)).bits, 0x7b);  // below half an ulp past max
  EXPECT_EQ(floatToFloat8E5M2(61440.0f).bits, 0x7c);                        // the tie goes to even: infinity
  EXPECT_EQ(floatToFloat8E5M2(-61440.0f).bits, 0xfc);
  EXPECT_EQ(floatToFloat8E5M2(1e30f).bits, 0x7c);
  EXPECT_EQ(floatToFloat8E5M2(std::numeric_limits<float>::infinity()).bits, 0x7c);
  EXPECT_EQ(floatToFloat8E5M2(-std::numeric_limits<float>::infinity()).bits, 0xfc);
}

TEST(Float8, SubnormalsAndZerosKeepTheirSign) {
  // e4m3: the subnormal unit is 2^-9; half of it (2^-10) is a tie that goes to even, zero.
  EXPECT_EQ(floatToFloat8E4M3(std::ldexp(1.0f, -10)).bits, 0x00);
  EXPECT_EQ(floatToFloat8E4M3(std::nextafter(std::ldexp(1.0f, -10), 1.0f)).bits, 0x01);
  EXPECT_EQ(floatToFloat8E4M3(std::ldexp(3.0f, -10)).bits, 0x02);  // 1.5 units: tie, to the even 2
  EXPECT_EQ(floatToFloat8E4M3(std::ldexp(7.5f, -9)).bits, 0x08);   // largest subnormal carries into 2^-6
  EXPECT_EQ(floatToFloat8E4M3(-std::ldexp(1.0f, -12)).bits, 0x80);
  EXPECT_EQ(floatToFloat8E4M3(-0.0f).bits, 0x80);
  EXPECT_EQ(floatToFloat8E4M3(0.0f).bits, 0x00);
  EXPECT_EQ(floatToFloat8E4M3(std::numeric_limits<float>::denorm_min()).bits, 0x00);
  // e5m2: the subnormal unit is 2^-16.
  EXPECT_EQ(floatToFloat8E5M2(std::ldexp(1.0f, -17)).bits, 0x00);
  EXPECT_EQ(floatToFloat8E5M2(std::nextafter(std::ldexp(1.0f, -17), 1.0f)).bits, 0x01);
  EXPECT_EQ(floatToFloat8E5M2(std::ldexp(3.5f, -16)).bits, 0x04);  // 3.5 units: tie, to the even 4 (2^-14)
  EXPECT_EQ(floatToFloat8E5M2(-0.0f).bits, 0x80);
  EXPECT_EQ(floatToFloat8E5M2(-std::ldexp(1.0f, -20)).bits, 0x80);
}

TEST(Float8, NanStaysNanWithItsSign) {
  const float quiet = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(floatToFloat8E4M3(quiet).bits, 0x7f);
  EXPECT_EQ(floatToFloat8E4M3(-quiet).bits, 0xff);
  EXPECT_EQ(floatToFloat8E5M2(quiet).bits, 0x7e);
  EXPECT_EQ(floatToFloat8E5M2(-quiet).bits, 0xfe);
  // A signalling fp32 NaN whose surviving payload bits are zero still becomes NaN, not infinity.
  EXPECT_EQ(floatToFloat8E5M2(floatFromBits(0x7f800001u)).bits, 0x7e);
  EXPECT_EQ(floatToFloat8E4M3(floatFromBits(0xff800001u)).bits, 0xff);
}

// rc::gen::inRange scales its range with the test size; bit patterns must be uniform from the first case.
rc::Gen<std::uint32_t> anyFloatBits() { return rc::gen::resize(rc::kNominalSize, rc::gen::arbitrary<std::uint32_t>()); }

RC_GTEST_PROP(Float8, AnyFloatRoundsLikeTheTableReference, ()) {
  const std::uint32_t bits = *anyFloatBits();
  RC_ASSERT(checkRounding<Float8E4M3>(bits) == "");
  RC_ASSERT(checkRounding<Float8E5M2>(bits) == "");
}

// Floats within the formats' ranges, where a uniform draw over all bits rarely lands: magnitudes in [2^-20,
// 2^17), every fp32 mantissa.
RC_GTEST_PROP(Float8, FloatsInRangeRoundLikeTheTableReference, ()) {
  const int exponent = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange(127 - 20, 127 + 17));
  const std::uint32_t mantissa = *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::uint32_t>(0, 1u << 23));
  const bool negative = *rc::gen::arbitrary<bool>();
  const std::uint32_t bits =
      (negative ? kFloat8FloatSignBit : 0u) | (static_cast<std::uint32_t>(exponent) << 23) | mantissa;
  RC_ASSERT(checkRounding<Float8E4M3>(bits) == "");
  RC_ASSERT(checkRounding<Float8E5M2>(bits) == "");
}

// ---- one pairwise step of every op, for every pair of patterns ----

// The exact result of one step in double (exact: the operands have 4 significant bits and exponents within
// 2^-16 .. 2^16, so sums and products fit a double's 53 bits), rounded once by the table reference. min and
// max select an operand: NaN first (the first operand when both are), then the smaller (larger), the first
// on equality (-0 vs +0).
template <typename F8>
std::uint8_t referenceStep(ReduceOp op, std::uint8_t a_bits, std::uint8_t b_bits, int world_size) {
  const Fp8Format& format = formatOf<F8>();
  const double a = referenceDecode(format, a_bits);
  const double b = referenceDecode(format, b_bits);
  const auto round = [](double x) { return std::isnan(x) ? std::uint8_t{0x7f} : rounderOf<F8>().round(x); };
  switch (op) {
    case ReduceOp::kSum:
      return round(a + b);
    case ReduceOp::kProd:
      return round(a * b);
    case ReduceOp::kMin:
    case ReduceOp::kMax: {
      if (std::isnan(a)) return a_bits;
      if (std::isnan(b)) return b_bits;
      const bool take_b = op == ReduceOp::kMin ? b < a : a < b;
      return take_b ? b_bits : a_bits;
    }
    case ReduceOp::kAvg: {
      // NCCL's: each operand times r = 1/n (in double, to fp32, to fp8), each product rounded, then summed.
      const std::uint8_t r_bits = round(static_cast<double>(static_cast<float>(1.0 / world_size)));
      const double r = referenceDecode(format, r_bits);
      const std::uint8_t ta = round(a * r);
      const std::uint8_t tb = round(b * r);
      if (isNanPattern(format, ta) || isNanPattern(format, tb)) return 0x7f;
      return round(referenceDecode(format, ta) + referenceDecode(format, tb));
    }
  }
  return 0;
}

// Every pair (a, b) of patterns as two sources of 65536 elements: reduceElements and hostReduce (the
// simulator's) against referenceStep. NaN results are compared as NaN (the sign of a NaN that arithmetic
// makes is the platform's).
template <typename F8>
void checkEveryPairwiseStep(ReduceOp op, int world_size) {
  const Fp8Format& format = formatOf<F8>();
  constexpr std::size_t kPairs = kPatternCount8 * kPatternCount8;
  std::vector<F8> first(kPairs);
  std::vector<F8> second(kPairs);
  for (std::size_t i = 0; i < kPairs; ++i) {
    first[i] = F8{static_cast<std::uint8_t>(i / kPatternCount8)};
    second[i] = F8{static_cast<std::uint8_t>(i % kPatternCount8)};
  }
  const F8* srcs[] = {first.data(), second.data()};
  const void* untyped[] = {first.data(), second.data()};
  const std::uint8_t from_send[] = {1, 1};
  const AvgStep avg{op == ReduceOp::kAvg, world_size, true, from_send};
  std::vector<F8> element_wise(kPairs);
  std::vector<F8> blocked(kPairs);
  visitReduceOp(static_cast<int>(op), false, [&](auto reduce) {
    reduceElements<F8, typename decltype(reduce)::type>(element_wise.data(), srcs, 2, kPairs, avg);
    return true;
  });
  hostReduce(format.dtype, op, blocked.data(), untyped, 2, kPairs, true, world_size, from_send);
  MismatchLog log;
  for (std::size_t i = 0; i < kPairs; ++i) {
    const std::uint8_t a = first[i].bits;
    const std::uint8_t b = second[i].bits;
    const std::uint8_t want = referenceStep<F8>(op, a, b, world_size);
    const bool selects = op == ReduceOp::kMin || op == ReduceOp::kMax;
    for (const std::uint8_t got : {element_wise[i].bits, blocked[i].bits}) {
      const bool ok = !selects && isNanPattern(format, want) ? isNanPattern(format, got) : got == want;
      if (!ok) {
        log.add(std::string(opText(op)) + "(" + hex(a) + ", " + hex(b) + ") over " + std::to_string(world_size) +
                " = " + hex(got) + ", want " + hex(want));
      }
    }
  }
  EXPECT_EQ(log.count(), 0) << formatName(format) << " " << opText(op) << "\n" << log.text();
}

template <typename F8>
void checkEveryOp() {
  for (const ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax}) {
    checkEveryPairwiseStep<F8>(op, 2);
  }
  for (const int world_size : {1, 2, 3, 7, 64}) checkEveryPairwiseStep<F8>(ReduceOp::kAvg, world_size);
}

TEST(Float8, EveryE4M3PairwiseStepIsTheExactResultRoundedOnce) { checkEveryOp<Float8E4M3>(); }

TEST(Float8, EveryE5M2PairwiseStepIsTheExactResultRoundedOnce) { checkEveryOp<Float8E5M2>(); }

// ---- what the formats' rules mean for reductions ----

template <typename F8, typename Op>
std::uint8_t fold(std::initializer_list<std::uint8_t> values, const AvgStep& avg = AvgStep{}) {
  std::vector<F8> inputs;
  for (const std::uint8_t bits : values) inputs.push_back(F8{bits});
  std::vector<const F8*> srcs;
  for (const F8& input : inputs) srcs.push_back(&input);
  F8 out{0};
  reduceElements<F8, Op>(&out, srcs.data(), static_cast<int>(srcs.size()), 1, avg);
  return out.bits;
}

TEST(Float8, E4M3SumsSaturateAndE5M2SumsOverflow) {
  EXPECT_EQ((fold<Float8E4M3, Sum>({0x7e, 0x7e})), 0x7e);  // 448 + 448: 448
  EXPECT_EQ((fold<Float8E4M3, Sum>({0xfe, 0xfe})), 0xfe);
  EXPECT_EQ((fold<Float8E4M3, Prod>({0x7e, 0x40})), 0x7e);                  // 448 x 2
  EXPECT_EQ((fold<Float8E5M2, Sum>({0x7b, 0x7b})), 0x7c);                   // 57344 + 57344: infinity
  EXPECT_EQ((fold<Float8E5M2, Sum>({0x7b, 0x6c})), 0x7c);                   // 57344 + 4096 = 61440, the tie: infinity
  EXPECT_EQ((fold<Float8E5M2, Sum>({0x7b, 0x68})), 0x7b);                   // 57344 + 2048: below the tie
  EXPECT_EQ((fold<Float8E5M2, Sum>({0x7c, 0xfc})) & kMagnitudeMask, 0x7e);  // inf - inf: NaN (quiet)
  EXPECT_EQ((fold<Float8E5M2, Sum>({0x7c, 0x7b})), 0x7c);
}

TEST(Float8, NanPropagatesThroughEveryOp) {
  // e4m3's NaN 0x7f; 1.0 is 0x38.
  for (const std::uint8_t nan : {std::uint8_t{0x7f}, std::uint8_t{0xff}}) {
    EXPECT_EQ((fold<Float8E4M3, Sum>({0x38, nan})) & kMagnitudeMask, 0x7f);
    EXPECT_EQ((fold<Float8E4M3, Prod>({nan, 0x38})) & kMagnitudeMask, 0x7f);
    EXPECT_EQ((fold<Float8E4M3, Min>({0x38, nan})), nan);
    EXPECT_EQ((fold<Float8E4M3, Max>({nan, 0x38})), nan);
  }
  EXPECT_EQ((fold<Float8E5M2, Min>({0x3c, 0x7e, 0x7f})), 0x7e);  // the first NaN
  EXPECT_EQ((fold<Float8E5M2, Max>({0x7c, 0xfd})), 0xfd);
}

TEST(Float8, SignedZerosFollowTheOtherFloats) {
  EXPECT_EQ((fold<Float8E4M3, Sum>({0x80, 0x80})), 0x80);  // -0 + -0 = -0
  EXPECT_EQ((fold<Float8E4M3, Sum>({0x80, 0x00})), 0x00);  // -0 + +0 = +0
  EXPECT_EQ((fold<Float8E5M2, Min>({0x80, 0x00})), 0x80);  // equal: the first operand
  EXPECT_EQ((fold<Float8E5M2, Min>({0x00, 0x80})), 0x00);
  EXPECT_EQ((fold<Float8E5M2, Prod>({0x80, 0x3c})), 0x80);  // -0 x 1
}

// Every pairwise step rounds to fp8, so the order of a fold is part of the bits: e4m3 16 + 1 is a tie
// between 16 and 18 that goes to 16, so ((16 + 1) + 1) is 16, while ((1 + 1) + 16) is 18. A sum that ran in
// fp32 and rounded once would give 18 both ways.
TEST(Float8, EveryStepOfAFoldRoundsSoTheOrderMatters) {
  constexpr std::uint8_t kOne = 0x38;
  constexpr std::uint8_t kSixteen = 0x58;
  constexpr std::uint8_t kEighteen = 0x59;
  EXPECT_EQ((fold<Float8E4M3, Sum>({kSixteen, kOne, kOne})), kSixteen);
  EXPECT_EQ((fold<Float8E4M3, Sum>({kOne, kOne, kSixteen})), kEighteen);
  const Float8E4M3 forward[] = {{kSixteen}, {kOne}, {kOne}};
  const void* host_srcs[] = {&forward[0], &forward[1], &forward[2]};
  Float8E4M3 out{0};
  hostReduce(DataType::kFloat8E4M3, ReduceOp::kSum, &out, host_srcs, 3, 1, false, 3);
  EXPECT_EQ(out.bits, kSixteen);
}

TEST(Float8, AvgPremultipliesByTheReciprocalRoundedToFp8) {
  // 1/3 in fp32, then to fp8: e4m3 0.34375 (0x2b), e5m2 0.3125 (0x35); powers of two are exact.
  EXPECT_EQ(avgReciprocal<Float8E4M3>(3).bits, 0x2b);
  EXPECT_EQ(avgReciprocal<Float8E5M2>(3).bits, 0x35);
  EXPECT_EQ(avgReciprocal<Float8E4M3>(64).bits, 0x08);  // 2^-6
  EXPECT_EQ(avgReciprocal<Float8E5M2>(1).bits, 0x3c);   // 1
  // [448, 448] over two ranks: 224 + 224 = 448, where summing first would saturate anyway; e5m2's [57344,
  // 57344] is 57344, where summing first overflows to infinity.
  const std::uint8_t from_send[] = {1, 1};
  EXPECT_EQ((fold<Float8E4M3, Avg>({0x7e, 0x7e}, AvgStep{true, 2, true, from_send})), 0x7e);
  EXPECT_EQ((fold<Float8E5M2, Avg>({0x7b, 0x7b}, AvgStep{true, 2, true, from_send})), 0x7b);
  // 3 x 3 over three ranks: every term 3 x 0.34375 = 1.03125, rounded to 1; the sum 3.
  const std::uint8_t three_from_send[] = {1, 1, 1};
  EXPECT_EQ((fold<Float8E4M3, Avg>({0x44, 0x44, 0x44}, AvgStep{true, 3, true, three_from_send})), 0x44);
}

}  // namespace
}  // namespace peerreduce::kernels
