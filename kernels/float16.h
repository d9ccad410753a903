// 16-bit floating point storage types (IEEE binary16 "fp16" and bfloat16 "bf16") and their exact
// conversions to and from fp32, shared by host code (the simulator) and device code (the kernels).
//
// Algorithm: pure integer manipulation of the IEEE fields, so host and device give identical bits
// without depending on F16C, the CUDA/HIP half intrinsics or the floating-point environment.
// - Widening (16 -> 32 bits) is exact. fp16 normals rebias the exponent (15 -> 127) and shift the
//   mantissa; fp16 subnormals are normalised (shift the mantissa until its leading one reaches the
//   hidden-bit position, lowering the exponent once per shift); inf/NaN keep sign and payload
//   unchanged (a signalling NaN stays signalling, as a bit pattern). bf16 is the top half of an fp32,
//   so widening is a 16-bit shift.
// - Narrowing (32 -> 16 bits) rounds to nearest, ties to even: the bits that do not fit are the
//   remainder; the kept part is incremented when the remainder is above half an ulp, or exactly half
//   with an odd kept part. The increment may carry from the mantissa into the exponent (1.11..1 ->
//   10.0), from the largest subnormal into the smallest normal, and from the largest finite into
//   infinity; the encodings are laid out so that an integer +1 does exactly that. fp16 results in the
//   subnormal range are computed from the fp32 significand (hidden bit included) shifted to the fp16
//   subnormal unit 2^-24, with the same rounding rule. NaN stays NaN: the sign is kept, the quiet bit
//   is set (so a payload whose surviving bits are all zero cannot turn into infinity) and the top
//   payload bits are kept.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "portability.h"

namespace peerreduce::kernels {

// IEEE 754 binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
struct Half {
  std::uint16_t bits;
};

// bfloat16: the top 16 bits of an IEEE binary32: 1 sign bit, 8 exponent bits (bias 127), 7 mantissa bits.
struct BFloat16 {
  std::uint16_t bits;
};

static_assert(sizeof(Half) == 2 && std::is_trivially_copyable_v<Half>,
              "Half must be a 2-byte POD: it is the wire format");
static_assert(sizeof(BFloat16) == 2 && std::is_trivially_copyable_v<BFloat16>,
              "BFloat16 must be a 2-byte POD: it is the wire format");

// Reinterprets the bytes of `from` as a `To` without union punning or aliasing violations. memcpy of
// a fixed small size compiles to a register move on host and device alike.
template <typename To, typename From>
PR_HOST_DEVICE PR_INLINE To bitCast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bitCast needs types of equal size");
  static_assert(std::is_trivially_copyable_v<To> && std::is_trivially_copyable_v<From>,
                "bitCast needs trivially copyable types");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}

namespace float16_detail {

// fp32 layout.
inline constexpr std::uint32_t kF32SignMask = 0x80000000u;
inline constexpr std::uint32_t kF32AbsMask = 0x7fffffffu;
inline constexpr std::uint32_t kF32InfBits = 0x7f800000u;  // exponent all ones, mantissa zero
inline constexpr int kF32MantissaBits = 23;
inline constexpr std::uint32_t kF32MantissaMask = 0x007fffffu;
inline constexpr std::uint32_t kF32HiddenBit = 0x00800000u;  // implicit leading one of a normal
inline constexpr int kF32Bias = 127;

// fp16 layout.
inline constexpr std::uint32_t kF16SignMask = 0x8000u;
inline constexpr int kF16MantissaBits = 10;
inline constexpr std::uint32_t kF16MantissaMask = 0x03ffu;
inline constexpr std::uint32_t kF16HiddenBit = 0x0400u;
inline constexpr std::uint32_t kF16ExponentMax = 0x1fu;  // all ones: inf or NaN
inline constexpr std::uint32_t kF16InfBits = 0x7c00u;
inline constexpr std::uint32_t kF16QuietBit = 0x0200u;  // top mantissa bit
inline constexpr int kF16Bias = 15;
// fp32 exponent minus fp16 exponent for the same value.
inline constexpr int kF16ToF32BiasDelta = kF32Bias - kF16Bias;
// fp32 mantissa bits that fp16 drops.
inline constexpr int kF32ToF16Shift = kF32MantissaBits - kF16MantissaBits;
// |x| >= 2^16 (fp32 bits) is beyond halfway between 65504 (largest fp16) and 65536, so infinity.
// Values between 65504 and 2^16 are left to the normal path, whose rounding carry produces infinity.
inline constexpr std::uint32_t kF32AbsOverflowToF16Inf = 0x47800000u;
// |x| >= 2^-14 (fp32 bits): the smallest fp16 normal; below it the result is subnormal or zero.
inline constexpr std::uint32_t kF32AbsMinF16Normal = 0x38800000u;
// |x| <= 2^-25 (fp32 bits) is at most half the smallest fp16 subnormal 2^-24: rounds to zero (the tie
// at exactly 2^-25 goes to the even neighbour, zero).
inline constexpr std::uint32_t kF32AbsMaxRoundsToF16Zero = 0x33000000u;
// An fp32 significand with biased exponent e, in units of the fp16 subnormal ulp 2^-24, is
// significand * 2^(e - 127 - 23 + 24) = significand >> (126 - e).
inline constexpr int kF16SubnormalShiftBase = kF32Bias - 1;
// The exponent that a normalised fp16 subnormal gets in fp32: value = mantissa * 2^-24 where the
// leading one of the mantissa sits at bit p, so the fp32 biased exponent is p - 24 + 127.
inline constexpr int kF16SubnormalExponentBase = kF32Bias - 24;

// bf16 layout.
inline constexpr int kBF16Shift = 16;  // bf16 is the top half of an fp32
inline constexpr std::uint32_t kBF16QuietBit = 0x0040u;
inline constexpr std::uint32_t kBF16LowMask = 0xffffu;
inline constexpr std::uint32_t kBF16Half = 0x8000u;  // half an ulp of the kept part

// Rounds `kept` (the high part) up when `rest` (the dropped low bits) exceeds `half`, or equals it with
// an odd `kept`: round to nearest, ties to even.
PR_HOST_DEVICE PR_INLINE std::uint32_t roundNearestEven(std::uint32_t kept, std::uint32_t rest, std::uint32_t half) {
  const bool up = rest > half || (rest == half && (kept & 1u) != 0u);
  return kept + (up ? 1u : 0u);
}

}  // namespace float16_detail

// On NVIDIA devices (sm_80 on) the conversion instructions round to nearest even as the integer code here
// does, subnormals kept (no .ftz), in one instruction instead of a dozen integer ones: a bf16 fold spent
// about a tenth more time than an fp32 fold of the same bytes (2 x H200, docs/PERF.md). NaNs keep the integer
// path, whose payload rule the instructions do not follow (they give the canonical NaN), so the bits are the
// same everywhere; the hardware property suite compares them with the host's.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define PR_NATIVE_FLOAT16_CONVERSIONS 1
#endif

PR_HOST_DEVICE PR_INLINE float halfToFloat(Half h) {
  using namespace float16_detail;
#ifdef PR_NATIVE_FLOAT16_CONVERSIONS
  if ((h.bits & 0x7fffu) <= 0x7c00u) {  // not a NaN
    float widened;
    asm("cvt.f32.f16 %0, %1;" : "=f"(widened) : "h"(h.bits));
    return widened;
  }
#endif
  const std::uint32_t bits = h.bits;
  const std::uint32_t sign = (bits & kF16SignMask) << kBF16Shift;
  const std::uint32_t exponent = (bits >> kF16MantissaBits) & kF16ExponentMax;
  std::uint32_t mantissa = bits & kF16MantissaMask;
  std::uint32_t out;
  if (exponent == kF16ExponentMax) {
    out = sign | kF32InfBits | (mantissa << kF32ToF16Shift);  // inf, or NaN with its payload
  } else if (exponent != 0u) {
    out = sign | ((exponent + kF16ToF32BiasDelta) << kF32MantissaBits) | (mantissa << kF32ToF16Shift);
  } else if (mantissa == 0u) {
    out = sign;  // +-0
  } else {
    // Subnormal: find the leading one (at most 9 shifts, the mantissa is nonzero).
    int leading = kF16MantissaBits - 1;
    while ((mantissa & (1u << leading)) == 0u) --leading;
    const std::uint32_t f32_exponent = static_cast<std::uint32_t>(kF16SubnormalExponentBase + leading);
    mantissa = (mantissa << (kF32MantissaBits - leading)) & kF32MantissaMask;  // drop the leading one
    out = sign | (f32_exponent << kF32MantissaBits) | mantissa;
  }
  return bitCast<float>(out);
}

PR_HOST_DEVICE PR_INLINE Half floatToHalf(float f) {
  using namespace float16_detail;
  const std::uint32_t x = bitCast<std::uint32_t>(f);
#ifdef PR_NATIVE_FLOAT16_CONVERSIONS
  if ((x & kF32AbsMask) <= kF32InfBits) {  // not a NaN
    std::uint16_t narrowed;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(narrowed) : "f"(f));
    return Half{narrowed};
  }
#endif
  const std::uint32_t sign = (x & kF32SignMask) >> kBF16Shift;
  const std::uint32_t abs = x & kF32AbsMask;
  std::uint32_t out;
  if (abs > kF32InfBits) {
    out = kF16InfBits | kF16QuietBit | ((abs & kF32MantissaMask) >> kF32ToF16Shift);  // NaN
  } else if (abs >= kF32AbsOverflowToF16Inf) {
    out = kF16InfBits;  // includes fp32 infinity
  } else if (abs >= kF32AbsMinF16Normal) {
    // Rebias in place: the fp32 exponent and mantissa fields are contiguous, so subtracting the bias
    // difference from the exponent field and dropping the low mantissa bits gives the fp16 fields.
    const std::uint32_t rebiased = abs - (static_cast<std::uint32_t>(kF16ToF32BiasDelta) << kF32MantissaBits);
    const std::uint32_t rest_mask = (1u << kF32ToF16Shift) - 1u;
    out = roundNearestEven(rebiased >> kF32ToF16Shift, rebiased & rest_mask, 1u << (kF32ToF16Shift - 1));
  } else if (abs > kF32AbsMaxRoundsToF16Zero) {
    // Subnormal fp16 (or the smallest normal after the rounding carry). The fp32 input is normal here.
    const std::uint32_t exponent = abs >> kF32MantissaBits;
    const std::uint32_t significand = (abs & kF32MantissaMask) | kF32HiddenBit;
    const int shift = kF16SubnormalShiftBase - static_cast<int>(exponent);  // 14..24
    const std::uint32_t rest_mask = (1u << shift) - 1u;
    out = roundNearestEven(significand >> shift, significand & rest_mask, 1u << (shift - 1));
  } else {
    out = 0u;  // rounds to zero, keeping the sign below
  }
  return Half{static_cast<std::uint16_t>(sign | out)};
}

PR_HOST_DEVICE PR_INLINE float bfloat16ToFloat(BFloat16 b) {
  return bitCast<float>(static_cast<std::uint32_t>(b.bits) << float16_detail::kBF16Shift);
}

PR_HOST_DEVICE PR_INLINE BFloat16 floatToBFloat16(float f) {
  using namespace float16_detail;
  const std::uint32_t x = bitCast<std::uint32_t>(f);
#ifdef PR_NATIVE_FLOAT16_CONVERSIONS
  if ((x & kF32AbsMask) <= kF32InfBits) {  // not a NaN
    std::uint16_t narrowed;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(narrowed) : "f"(f));
    return BFloat16{narrowed};
  }
#endif
  std::uint32_t out;
  if ((x & kF32AbsMask) > kF32InfBits) {
    out = (x >> kBF16Shift) | kBF16QuietBit;  // NaN: sign, top payload bits, quiet bit
  } else {
    // The sign bit rides along in the kept part; the carry out of the magnitude stops at infinity
    // (0x7f7f + 1 = 0x7f80), so it never reaches the sign.
    out = roundNearestEven(x >> kBF16Shift, x & kBF16LowMask, kBF16Half);
  }
  return BFloat16{static_cast<std::uint16_t>(out)};
}

}  // namespace peerreduce::kernels
