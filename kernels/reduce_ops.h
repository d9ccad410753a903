// Per-element reduce arithmetic shared by the simulator (host) and the GPU kernels (device).
//
// Algorithm: every element is reduced on its own, in an accumulation type (Accumulator<T>): the first
// source is loaded (widened), the other sources are folded in strictly left to right with the op, and
// the result is stored (narrowed, round to nearest even for the 16-bit floats). Because floating-point
// operations are not associative, the order of the sources is part of the result's bits; callers (plans)
// fix it, and every transport must use the same order.
// The 8-bit floats (float8.h) accumulate in their own format, as NCCL's fp8 reductions do: every pairwise
// step of the fold converts both operands to fp32 (exact), computes there, and rounds the result to nearest
// even back to fp8 (e4m3 saturating at +-448, e5m2 overflowing to infinity, float8.h). fp32 holds the exact
// sum, product or product-with-the-reciprocal of two fp8 values, or one so close (24 significant bits
// against 3 or 4, Figueroa's 2p+2 rule) that rounding it once more to fp8 gives the correctly rounded
// result: each step is the exact result rounded once. So a fold of k sources rounds k-1 times, and its bits
// depend on the order, which the plans fix.
//
// Semantics, matching peerreduce/types.h:
// - Integers: sum and prod wrap modulo 2^bits, computed in the unsigned type of the same width so that
//   signed overflow (undefined behaviour in C++) never happens. min/max compare in the signed or
//   unsigned type itself.
// - avg combines with Sum and, as NCCL does, in two ways (AvgStep, AvgArithmetic):
//   - floating types: every element read from a send buffer is premultiplied before it enters a sum:
//     premultiplied(x) = store(load(x) * load(r)), r = avgReciprocal<T>(n), the reciprocal NCCL's ncclAvg
//     holds (1/n in double, rounded to fp32, then to T; fp64 keeps the double). The product is rounded once
//     to T (for fp16 and bf16 the fp32 product of two T values is exact, except a bf16 product below fp32's
//     normal range), so a premultiplied element is a T value: published in scratch first or summed at once,
//     it is the same number. The sum of the premultiplied terms is the result; nothing divides it.
//   - integers: the wrapped sum, divided once by the world size at the chunk's final reduction
//     (finalizeAvg), truncated toward zero (C division).
// - Floating min/max propagate NaN: if either operand is NaN the result is NaN (the first operand when
//   both are NaN). When the operands compare equal, the FIRST operand is returned; the only case where
//   that is visible is -0 vs +0: Min::apply(-0, +0) = -0, Min::apply(+0, -0) = +0, and the same for Max.
//   Since the fold order is fixed, this is still deterministic.
// - The premultiplication is the only multiply that an add follows; its product is rounded on its own
//   (host builds compile with -ffp-contract=off, CUDA with -fmad=false, HIP with -ffp-contract=off), so no
//   compiler fuses it into the sum and host and device give the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "float16.h"
#include "float8.h"
#include "portability.h"

namespace peerreduce::kernels {

// The type an element of T is accumulated in. Only the twelve element types of peerreduce have one.
template <typename T>
struct Accumulator;
// 8-bit floats accumulate in their own format: each op rounds its result back to it (see above).
template <>
struct Accumulator<Float8E4M3> {
  using Type = Float8E4M3;
};
template <>
struct Accumulator<Float8E5M2> {
  using Type = Float8E5M2;
};
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

// Widens an element to its accumulation type (exact for every T; the identity for the 8-bit floats).
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
// the identity otherwise (an 8-bit float's op rounded already).
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

// What min and max compare: the value itself, an 8-bit float's widened to fp32 (exact).
template <typename Acc>
PR_HOST_DEVICE PR_INLINE auto valueOf(Acc value) {
  if constexpr (kIsFloat8<Acc>) {
    return float8ToFloat(value);
  } else {
    return value;
  }
}

// min/max's choice: for floating types `a` when it is NaN, else `b` when it is NaN; then `b` when `b_beyond`
// (b strictly smaller for min, larger for max), else `a`, so equal operands (-0 vs +0) give the first.
template <typename Acc>
PR_HOST_DEVICE PR_INLINE Acc chooseOperand(Acc a, Acc b, bool b_beyond) {
  if constexpr (!std::is_integral_v<Acc>) {
    if (isNan(valueOf(a))) return a;
    if (isNan(valueOf(b))) return b;
  }
  return b_beyond ? b : a;
}

}  // namespace reduce_detail

// Ops: `static Acc apply(Acc a, Acc b)` combines the running value `a` with the next source `b`.
struct Sum {
  template <typename Acc>
  static PR_HOST_DEVICE PR_INLINE Acc apply(Acc a, Acc b) {
    if constexpr (kIsFloat8<Acc>) {
      return floatToFloat8<Acc>(float8ToFloat(a) + float8ToFloat(b));
    } else if constexpr (std::is_integral_v<Acc>) {
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
    if constexpr (kIsFloat8<Acc>) {
      return floatToFloat8<Acc>(float8ToFloat(a) * float8ToFloat(b));
    } else if constexpr (std::is_integral_v<Acc>) {
      using W = reduce_detail::WrapType<Acc>;
      return static_cast<Acc>(static_cast<W>(static_cast<W>(a) * static_cast<W>(b)));
    } else {
      return a * b;
    }
  }
};

// min and max select one operand, bit for bit, by comparing values (an 8-bit float's in fp32).
struct Min {
  template <typename Acc>
  static PR_HOST_DEVICE PR_INLINE Acc apply(Acc a, Acc b) {
    return reduce_detail::chooseOperand(a, b, reduce_detail::valueOf(b) < reduce_detail::valueOf(a));
  }
};

struct Max {
  template <typename Acc>
  static PR_HOST_DEVICE PR_INLINE Acc apply(Acc a, Acc b) {
    return reduce_detail::chooseOperand(a, b, reduce_detail::valueOf(a) < reduce_detail::valueOf(b));
  }
};

// avg combines like sum; what it adds is AvgArithmetic's.
using Avg = Sum;

// Whether avg premultiplies the elements of T (floating types) rather than dividing their sum (integers).
template <typename T>
inline constexpr bool kAvgPremultiplies = std::is_floating_point_v<AccumulatorT<T>> || kIsFloat8<T>;

// The reciprocal of the world size (>= 1) that floating avg premultiplies by, widened to the accumulator:
// the value NCCL's ncclAvg holds, 1/n in double rounded to fp32 and then to T (fp64: 1/n in double).
// Both divisions and roundings are correctly rounded IEEE operations on host and device alike.
template <typename T>
PR_HOST_DEVICE PR_INLINE AccumulatorT<T> avgReciprocal(int world_size) {
  static_assert(kAvgPremultiplies<T>, "integer avg divides its sum; it has no reciprocal");
  const double exact = 1.0 / static_cast<double>(world_size);
  if constexpr (std::is_same_v<T, double>) {
    return exact;
  } else if constexpr (kIsFloat8<T>) {
    return floatToFloat8<T>(static_cast<float>(exact));  // an 8-bit float accumulates in itself
  } else {
    return loadElement<T>(storeElement<T>(static_cast<float>(exact)));
  }
}

// One element read from a send buffer under a floating avg: its value times `reciprocal`
// (avgReciprocal<T>), rounded once to T (Prod's step: for the 8-bit floats, the fp32 product rounded).
template <typename T>
PR_HOST_DEVICE PR_INLINE T premultiplied(T element, AccumulatorT<T> reciprocal) {
  static_assert(kAvgPremultiplies<T>, "integer avg divides its sum; it premultiplies nothing");
  return storeElement<T>(Prod::apply(loadElement<T>(element), reciprocal));
}

// Divides an accumulated integer sum by the world size (>= 1): truncation toward zero, computed in 64
// bits so that a world size beyond the range of T (say 200 ranks of int8) is still exact; the quotient's
// magnitude is at most the sum's, so it fits T, and INT_MIN / world_size cannot overflow.
template <typename T>
PR_HOST_DEVICE PR_INLINE AccumulatorT<T> finalizeAvg(AccumulatorT<T> acc, int world_size) {
  using Acc = AccumulatorT<T>;
  static_assert(std::is_integral_v<Acc>, "floating avg premultiplies its inputs; nothing divides its sum");
  if constexpr (std::is_signed_v<Acc>) {
    return static_cast<Acc>(static_cast<std::int64_t>(acc) / static_cast<std::int64_t>(world_size));
  } else {
    return static_cast<Acc>(static_cast<std::uint64_t>(acc) / static_cast<std::uint64_t>(world_size));
  }
}

// avg's share of one reduction (or of a copy out of a send buffer), as plain data that host and device
// code pass around. The default is no avg at all: every other op passes it, and it changes nothing.
struct AvgStep {
  bool active = false;                      // the op is avg
  int world_size = 1;                       // the ranks averaged over (>= 1 when active)
  bool finalize = false;                    // the chunk's final reduction: an integer avg divides here
  const std::uint8_t* from_send = nullptr;  // per source, in fold order: 1 when read from a send buffer
                                            // (a floating avg premultiplies it), 0 otherwise; null: none is
};

// AvgStep applied to elements of type T: the term each source contributes and the stored result.
template <typename T>
class AvgArithmetic {
 public:
  using Acc = AccumulatorT<T>;

  PR_HOST_DEVICE explicit AvgArithmetic(const AvgStep& step) : step_(step) {
    // Inactive: one, the reciprocal of a one-rank world (a constant; scaled() is asked only under avg).
    if constexpr (kAvgPremultiplies<T>) {
      reciprocal_ = step.active ? avgReciprocal<T>(step.world_size) : avgReciprocal<T>(1);
    }
  }

  // Whether source `k`'s elements are premultiplied (a floating avg reading a send buffer).
  PR_HOST_DEVICE bool premultiplies(int k) const {
    return kAvgPremultiplies<T> && step_.active && step_.from_send != nullptr && step_.from_send[k] != 0;
  }

  // The element as the sum sees it when its source is premultiplied (premultiplies(k) is true).
  PR_HOST_DEVICE T scaled(T element) const {
    if constexpr (kAvgPremultiplies<T>) {
      return premultiplied<T>(element, reciprocal_);
    } else {
      return element;
    }
  }

  // An element, widened, as it enters the fold: scaled first when its source premultiplies. Loops over
  // many elements of one source ask premultiplies(k) once and pass the answer.
  PR_HOST_DEVICE Acc widen(bool premultiply, T element) const {
    return loadElement<T>(premultiply ? scaled(element) : element);
  }

  // Source k's element, widened, as it enters the fold.
  PR_HOST_DEVICE Acc term(int k, T element) const { return widen(premultiplies(k), element); }

  // The folded value as it is stored: an integer avg's final reduction divides; nothing else changes it.
  PR_HOST_DEVICE T result(Acc acc) const {
    if constexpr (!kAvgPremultiplies<T>) {
      if (step_.active && step_.finalize) acc = finalizeAvg<T>(acc, step_.world_size);
    }
    return storeElement<T>(acc);
  }

 private:
  AvgStep step_;
  Acc reciprocal_{};  // floating avg: avgReciprocal<T>(world_size)
};

// Reduces `count` elements of `nsrc` (>= 1) sources into dst:
//   dst[i] = result(op(...op(op(term(0, srcs[0][i]), term(1, srcs[1][i])), ...), term(nsrc-1, srcs[nsrc-1][i])))
// with term and result those of AvgArithmetic<T>(avg) (plain load and store unless the op is avg).
// Sources are folded strictly left to right. dst may be exactly one of the sources (in place): every
// element is read from all sources before it is written. Partially overlapping ranges are not allowed.
// Pointers must be aligned for T.
template <typename T, typename Op>
PR_HOST_DEVICE PR_INLINE void reduceElements(T* dst, const T* const* srcs, int nsrc, std::size_t count,
                                             const AvgStep& avg = AvgStep{}) {
  const AvgArithmetic<T> arithmetic(avg);
  for (std::size_t i = 0; i < count; ++i) {
    AccumulatorT<T> acc = arithmetic.term(0, srcs[0][i]);
    for (int k = 1; k < nsrc; ++k) acc = Op::apply(acc, arithmetic.term(k, srcs[k][i]));
    dst[i] = arithmetic.result(acc);
  }
}

}  // namespace peerreduce::kernels
