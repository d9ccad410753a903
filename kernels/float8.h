// 8-bit floating point storage types, the OCP FP8 formats NCCL calls ncclFloat8e4m3 and ncclFloat8e5m2,
// and their conversions to and from fp32, shared by host code (the simulator) and device code (the kernels).
//
// The formats (OCP 8-bit Floating Point Specification, the __nv_fp8_e4m3 / __nv_fp8_e5m2 of cuda_fp8.h,
// torch.float8_e4m3fn / torch.float8_e5m2):
// - e4m3 ("e4m3fn"): 1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits. No infinities: the all-ones
//   exponent holds normal numbers (256 .. 448), except S.1111.111, the one NaN of each sign. Largest finite
//   448 (0x7e), smallest normal 2^-6, smallest subnormal 2^-9.
// - e5m2: 1 sign bit, 5 exponent bits (bias 15), 2 mantissa bits, IEEE 754 rules: the all-ones exponent is
//   infinity (mantissa 0) or NaN. Largest finite 57344 (0x7b), smallest normal 2^-14, smallest subnormal
//   2^-16. e5m2 is the top byte of an IEEE binary16.
//
// Algorithm: pure integer manipulation of the fields, as float16.h does for fp16 and bf16, so host and device
// give identical bits without the CUDA/HIP fp8 intrinsics or the floating-point environment.
// - Widening (8 -> 32 bits) is exact. Normals rebias the exponent (7 or 15 -> 127) and shift the mantissa;
//   subnormals are normalised (the leading one of the mantissa becomes the hidden bit); an e4m3 NaN widens to
//   the fp32 quiet NaN of its sign; an e5m2 infinity to the fp32 infinity and an e5m2 NaN keeps sign and
//   payload (a signalling NaN stays signalling, as a bit pattern).
// - Narrowing (32 -> 8 bits) rounds to nearest, ties to even, through float16.h's roundNearestEven: the kept
//   part is incremented when the dropped bits are above half an ulp, or exactly half with an odd kept part.
//   The increment may carry from the mantissa into the exponent, from the largest subnormal into the smallest
//   normal and, past the largest finite value, into the overflow pattern. Results below the normal range are
//   computed from the fp32 significand shifted to the format's subnormal unit with the same rule; magnitudes
//   at or below half the smallest subnormal become zero of the input's sign (the tie goes to even, zero).
// - Overflow (a magnitude that rounds above the largest finite value) and infinities:
//   - e4m3 saturates to the largest finite value of the sign, +-448, as CUDA's __NV_SATFINITE conversion does
//     (the format has no infinity; the alternative, __NV_NOSAT, would turn an overflowing sum into NaN);
//   - e5m2 follows IEEE 754: an overflowing magnitude becomes infinity of its sign (values from 61440 =
//     57344 + half an ulp up; the tie at 61440 goes to even, which is infinity) and infinity stays infinity.
//     NCCL's kernels convert with __NV_SATFINITE for e5m2 too, so an e5m2 sum that overflows is 57344 there
//     and infinity here; finite results that do not overflow are the same.
// - NaN stays NaN with its sign. e4m3 has one NaN per sign (S.1111.111). e5m2 sets the quiet bit (the top
//   mantissa bit) and keeps the top payload bit below it, as cuda_fp8.h does. So widening and narrowing again
//   gives every one of the 256 patterns back, except e5m2's signalling NaNs S.11111.01, which come back quiet
//   (S.11111.11).
#pragma once

#include <cstdint>
#include <type_traits>

#include "float16.h"
#include "portability.h"

namespace peerreduce::kernels {

// OCP FP8 E4M3 (finite: no infinities, NaN S.1111.111): 1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits.
struct Float8E4M3 {
  std::uint8_t bits;
};

// OCP FP8 E5M2 (IEEE-like: infinities and NaNs): 1 sign bit, 5 exponent bits (bias 15), 2 mantissa bits.
struct Float8E5M2 {
  std::uint8_t bits;
};

static_assert(sizeof(Float8E4M3) == 1 && std::is_trivially_copyable_v<Float8E4M3>,
              "Float8E4M3 must be a 1-byte POD: it is the wire format");
static_assert(sizeof(Float8E5M2) == 1 && std::is_trivially_copyable_v<Float8E5M2>,
              "Float8E5M2 must be a 1-byte POD: it is the wire format");

// Whether T is one of the 8-bit float storage types.
template <typename T>
inline constexpr bool kIsFloat8 = std::is_same_v<T, Float8E4M3> || std::is_same_v<T, Float8E5M2>;

namespace float8_detail {

using float16_detail::kF32AbsMask;
using float16_detail::kF32Bias;
using float16_detail::kF32HiddenBit;
using float16_detail::kF32InfBits;
using float16_detail::kF32MantissaBits;
using float16_detail::kF32MantissaMask;
using float16_detail::kF32SignMask;

inline constexpr int kF8SignShift = 24;  // fp32 sign bit 31 -> fp8 sign bit 7
inline constexpr std::uint32_t kF8SignMask = 0x80u;
inline constexpr std::uint32_t kF8AbsMask = 0x7fu;
inline constexpr std::uint32_t kF32QuietNanBits = 0x7fc00000u;

// The layout of one format. `finite`: e4m3's rules (no infinity, the all-ones exponent holds normals, only
// the all-ones magnitude is NaN, overflow saturates); otherwise IEEE's (e5m2).
struct Layout {
  int mantissa_bits;
  int bias;
  bool finite;
  std::uint32_t max_finite;  // magnitude bits of the largest finite value
  std::uint32_t overflow;    // magnitude bits an overflowing (or infinite) input becomes
};

template <typename F8>
PR_HOST_DEVICE PR_INLINE constexpr Layout layoutOf() {
  static_assert(kIsFloat8<F8>, "layoutOf needs an 8-bit float type");
  if constexpr (std::is_same_v<F8, Float8E4M3>) {
    return Layout{3, 7, true, 0x7eu, 0x7eu};
  } else {
    return Layout{2, 15, false, 0x7bu, 0x7cu};
  }
}

template <typename F8>
PR_HOST_DEVICE PR_INLINE float widen(std::uint8_t bits) {
  constexpr Layout kLayout = layoutOf<F8>();
  constexpr int kM = kLayout.mantissa_bits;
  constexpr std::uint32_t kMantissaMask = (1u << kM) - 1u;
  constexpr std::uint32_t kExponentMax = kF8AbsMask >> kM;  // all ones
  const std::uint32_t sign = (static_cast<std::uint32_t>(bits) & kF8SignMask) << kF8SignShift;
  const std::uint32_t exponent = (bits >> kM) & kExponentMax;
  const std::uint32_t mantissa = bits & kMantissaMask;
  std::uint32_t out;
  if (kLayout.finite && (bits & kF8AbsMask) == kF8AbsMask) {
    out = sign | kF32QuietNanBits;  // e4m3's NaN
  } else if (!kLayout.finite && exponent == kExponentMax) {
    out = sign | kF32InfBits | (mantissa << (kF32MantissaBits - kM));  // inf, or NaN with its payload
  } else if (exponent != 0u) {
    out = sign | ((exponent + static_cast<std::uint32_t>(kF32Bias - kLayout.bias)) << kF32MantissaBits) |
          (mantissa << (kF32MantissaBits - kM));
  } else if (mantissa == 0u) {
    out = sign;  // +-0
  } else {
    // Subnormal: mantissa * 2^(1 - bias - M). With its leading one at bit p, that is 1.f * 2^(p + 1 - bias - M).
    int leading = kM - 1;
    while ((mantissa & (1u << leading)) == 0u) --leading;
    const auto f32_exponent = static_cast<std::uint32_t>(kF32Bias + leading + 1 - kLayout.bias - kM);
    out = sign | (f32_exponent << kF32MantissaBits) | ((mantissa << (kF32MantissaBits - leading)) & kF32MantissaMask);
  }
  return bitCast<float>(out);
}

template <typename F8>
PR_HOST_DEVICE PR_INLINE std::uint8_t narrow(float f) {
  constexpr Layout kLayout = layoutOf<F8>();
  constexpr int kM = kLayout.mantissa_bits;
  constexpr int kDropped = kF32MantissaBits - kM;  // fp32 mantissa bits the format drops
  // fp32 exponent field of the smallest normal, 2^(1 - bias).
  constexpr std::uint32_t kMinNormalExponent = static_cast<std::uint32_t>(kF32Bias + 1 - kLayout.bias);
  // fp32 exponent field of half the smallest subnormal, 2^(-bias - M): at or below it, zero.
  constexpr std::uint32_t kHalfMinSubnormalExponent = static_cast<std::uint32_t>(kF32Bias - kLayout.bias - kM);
  const std::uint32_t x = bitCast<std::uint32_t>(f);
  const std::uint32_t sign = (x & kF32SignMask) >> kF8SignShift;
  const std::uint32_t abs = x & kF32AbsMask;
  const std::uint32_t exponent = abs >> kF32MantissaBits;
  std::uint32_t out;
  if (abs > kF32InfBits) {
    // NaN. e4m3: its one NaN. e5m2: the quiet bit and the top payload bit below it.
    out = kLayout.finite ? kF8AbsMask : (kLayout.overflow | ((abs >> kDropped) & ((1u << kM) - 1u)) | (1u << (kM - 1)));
  } else if (abs == kF32InfBits) {
    out = kLayout.overflow;  // e5m2: infinity; e4m3: saturated
  } else if (exponent >= kMinNormalExponent) {
    // Rebias in place (the exponent and mantissa fields are contiguous), then drop the low mantissa bits.
    const std::uint32_t rebiased = abs - ((kF32Bias - static_cast<std::uint32_t>(kLayout.bias)) << kF32MantissaBits);
    const std::uint32_t rest_mask = (1u << kDropped) - 1u;
    out = float16_detail::roundNearestEven(rebiased >> kDropped, rebiased & rest_mask, 1u << (kDropped - 1));
    // Past the largest finite value (by the rounding carry or by far): saturate or infinity. For e4m3 the
    // carry can land on the NaN pattern 0x7f, which is an overflow like any larger value.
    if (out > kLayout.max_finite) out = kLayout.overflow;
  } else if (exponent >= kHalfMinSubnormalExponent) {
    // Subnormal (or the smallest normal after the rounding carry); at exactly half the smallest subnormal
    // the tie goes to even, zero. The significand in units of the subnormal ulp 2^(1 - bias - M) is
    // significand * 2^(exponent - 127 - 23 - 1 + bias + M): a right shift by 24 down to 24 - (normal range).
    const std::uint32_t significand = (abs & kF32MantissaMask) | kF32HiddenBit;
    const int shift = kF32Bias + kF32MantissaBits + 1 - kLayout.bias - kM - static_cast<int>(exponent);
    const std::uint32_t rest_mask = (1u << shift) - 1u;
    out = float16_detail::roundNearestEven(significand >> shift, significand & rest_mask, 1u << (shift - 1));
  } else {
    out = 0u;  // rounds to zero (fp32 subnormals included), keeping the sign below
  }
  return static_cast<std::uint8_t>(sign | out);
}

}  // namespace float8_detail

PR_HOST_DEVICE PR_INLINE float float8E4M3ToFloat(Float8E4M3 value) {
  return float8_detail::widen<Float8E4M3>(value.bits);
}
PR_HOST_DEVICE PR_INLINE Float8E4M3 floatToFloat8E4M3(float f) {
  return Float8E4M3{float8_detail::narrow<Float8E4M3>(f)};
}
PR_HOST_DEVICE PR_INLINE float float8E5M2ToFloat(Float8E5M2 value) {
  return float8_detail::widen<Float8E5M2>(value.bits);
}
PR_HOST_DEVICE PR_INLINE Float8E5M2 floatToFloat8E5M2(float f) {
  return Float8E5M2{float8_detail::narrow<Float8E5M2>(f)};
}

// The same, for either format by type (the reduce arithmetic is written once for both).
template <typename F8>
PR_HOST_DEVICE PR_INLINE float float8ToFloat(F8 value) {
  return float8_detail::widen<F8>(value.bits);
}
template <typename F8>
PR_HOST_DEVICE PR_INLINE F8 floatToFloat8(float f) {
  return F8{float8_detail::narrow<F8>(f)};
}

}  // namespace peerreduce::kernels
