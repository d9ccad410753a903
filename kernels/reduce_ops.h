// Per-element reduce arithmetic shared by the simulator (host) and the GPU kernels (device).
//
// Algorithm: every element is reduced on its own, in an accumulation type (Accumulator<T>): the first
// source is loaded (widened), the other sources are folded in strictly left to right with the op, the
// average (if asked) divides once, and the result is stored (narrowed, round to nearest even for the
// 16-bit floats). Because floating-point operations are not associative, the order of the sources is
// part of the result's bits; callers (plans) fix it, and every transport must use the same order.
//
// Semantics, matching peerreduce/types.h:
// - Integers: sum and prod wrap modulo 2^bits, computed in the unsigned type of the same width so that
//   signed overflow (undefined behaviour in C++) never happens. min/max compare in the signed or
//   unsigned type itself.
// - avg: combines with Sum; finalizeAvg divides once by the world size. Integers: the wrapped sum
//   divided by the world size, truncated toward zero (C division). Floats: one IEEE division in the
//   accumulation type (on CUDA this needs the default -prec-div=true; fast-math builds would differ).
// - Floating min/max propagate NaN: if either operand is NaN the result is NaN (the first operand when
//   both are NaN). When the operands compare equal, the FIRST operand is returned; the only case where
//   that is visible is -0 vs +0: Min::apply(-0, +0) = -0, Min::apply(+0, -0) = +0, and the same for Max.
//   Since the fold order is fixed, this is still deterministic.
// - No op multiplies and adds in one expression, so FMA contraction cannot change results between host
//   and device compilers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "float16.h"
#include "portability.h"

namespace peerreduce::kernels {

// The type an element of T is accumulated in. Only the ten element types of peerreduce have one.
template <typename T>
struct Accumulator;
template <>
struct Accumulator<Half> {
  using Type = float;  // 16-bit floats accumulate in fp32 (DESIGN.md "Results")
};
template <>
struct Accumulator<BFloat16> {
  using Type = float;
};
template <>
struct Accumulator<float> {
  using Type = float;
};
template <>
struct Accumulator<double> {
  using Type = double;
};
template <>
struct Accumulator<std::int8_t> {
  using Type = std::int8_t;
};
template <>
struct Accumulator<std::uint8_t> {
  using Type = std::uint8_t;
};
template <>
struct Accumulator<std::int32_t> {
  using Type = std::int32_t;
};
template <>
struct Accumulator<std::uint32_t> {
  using Type = std::uint32_t;
};
template <>
struct Accumulator<std::int64_t> {
  using Type = std::int64_t;
};
template <>
struct Accumulator<std::uint64_t> {
  using Type = std::uint64_t;
};

template <typename T>
using AccumulatorT = typename Accumulator<T>::Type;

// Widens an element to its accumulation type (exact for every T).
template <typename T>
PR_HOST_DEVICE PR_INLINE AccumulatorT<T> loadElement(T value) {
  if constexpr (std::is_same_v<T, Half>) {
    return halfToFloat(value);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return bfloat16ToFloat(value);
  } else {
    return value;
  }
}

// Narrows an accumulated value to the element type: round to nearest even for the 16-bit floats,
// the identity otherwise.
template <typename T>
PR_HOST_DEVICE PR_INLINE T storeElement(AccumulatorT<T> acc) {
  if constexpr (std::is_same_v<T, Half>) {
    return floatToHalf(acc);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return floatToBFloat16(acc);
  } else {
    return acc;
  }
}

namespace reduce_detail {

// The unsigned type integer arithmetic wraps in: the unsigned type of T's width, promoted to at least
// unsigned int so that narrow operands are not promoted to (signed) int, where a product can overflow.
template <typename T>
using WrapType = std::common_type_t<std::make_unsigned_t<T>, unsigned int>;

template <typename T>
PR_HOST_DEVICE PR_INLINE bool isNan(T value) {
  return value != value;  // only NaN compares unequal to itself
}

}  // namespace reduce_detail

// Ops: `static Acc apply(Acc a, Acc b)` combines the running value `a` with the next source `b`.
struct Sum {
  template <typename Acc>
  static PR_HOST_DEVICE PR_INLINE Acc apply(Acc a, Acc b) {
    if constexpr (std::is_integral_v<Acc>) {
      using W = reduce_detail::WrapType<Acc>;
      // Conversion back to a signed type is modular since C++20.
      return static_cast<Acc>(static_cast<W>(static_cast<W>(a) + static_cast<W>(b)));
    } else {
      return a + b;
    }
  }
};

struct Prod {
  template <typename Acc>
  static PR_HOST_DEVICE PR_INLINE Acc apply(Acc a, Acc b) {
    if constexpr (std::is_integral_v<Acc>) {
      using W = reduce_detail::WrapType<Acc>;
      return static_cast<Acc>(static_cast<W>(static_cast<W>(a) * static_cast<W>(b)));
    } else {
      return a * b;
    }
  }
};

struct Min {
  template <typename Acc>
  static PR_HOST_DEVICE PR_INLINE Acc apply(Acc a, Acc b) {
    if constexpr (!std::is_integral_v<Acc>) {
      if (reduce_detail::isNan(a)) return a;
      if (reduce_detail::isNan(b)) return b;
    }
    return b < a ? b : a;  // equal operands (-0 vs +0) give the first
  }
};

struct Max {
  template <typename Acc>
  static PR_HOST_DEVICE PR_INLINE Acc apply(Acc a, Acc b) {
    if constexpr (!std::is_integral_v<Acc>) {
      if (reduce_detail::isNan(a)) return a;
      if (reduce_detail::isNan(b)) return b;
    }
    return a < b ? b : a;  // equal operands (-0 vs +0) give the first
  }
};

// avg combines like sum; the division is finalizeAvg.
using Avg = Sum;

// Divides an accumulated sum by the world size (>= 1). Integers: truncation toward zero, computed in
// 64 bits so that a world size beyond the range of T (say 200 ranks of int8) is still exact; the
// quotient's magnitude is at most the sum's, so it fits T, and INT_MIN / world_size cannot overflow.
template <typename T>
PR_HOST_DEVICE PR_INLINE AccumulatorT<T> finalizeAvg(AccumulatorT<T> acc, int world_size) {
  using Acc = AccumulatorT<T>;
  if constexpr (std::is_integral_v<Acc> && std::is_signed_v<Acc>) {
    return static_cast<Acc>(static_cast<std::int64_t>(acc) / static_cast<std::int64_t>(world_size));
  } else if constexpr (std::is_integral_v<Acc>) {
    return static_cast<Acc>(static_cast<std::uint64_t>(acc) / static_cast<std::uint64_t>(world_size));
  } else {
    return acc / static_cast<Acc>(world_size);  // exact conversion: world sizes are far below 2^24
  }
}

// Reduces `count` elements of `nsrc` (>= 1) sources into dst:
//   dst[i] = store(finalize?(op(...op(op(load(srcs[0][i]), load(srcs[1][i])), ...), load(srcs[nsrc-1][i]))))
// Sources are folded strictly left to right. dst may be exactly one of the sources (in place): every
// element is read from all sources before it is written. Partially overlapping ranges are not allowed.
// Pointers must be aligned for T.
template <typename T, typename Op>
PR_HOST_DEVICE PR_INLINE void reduceElements(T* dst, const T* const* srcs, int nsrc, std::size_t count,
                                             bool finalize_avg, int world_size) {
  for (std::size_t i = 0; i < count; ++i) {
    AccumulatorT<T> acc = loadElement<T>(srcs[0][i]);
    for (int k = 1; k < nsrc; ++k) acc = Op::apply(acc, loadElement<T>(srcs[k][i]));
    if (finalize_avg) acc = finalizeAvg<T>(acc, world_size);
    dst[i] = storeElement<T>(acc);
  }
}

}  // namespace peerreduce::kernels
