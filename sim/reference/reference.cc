// The independent reference: integer results by exact 64-bit modular arithmetic truncated to the
// dtype's width, floating results in long double with a proven tolerance. It deliberately shares no code
// and no technique with kernels/: 16-bit and 8-bit floats are decoded with ldexp from their fields, and
// payloads are assembled from sign/exponent/mantissa fields.
#include "reference/reference.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>

namespace peerreduce::testing {
namespace {

[[noreturn]] void dieOnMisuse(const char* what) {
  std::fprintf(stderr, "peerreduce test reference misused: %s\n", what);
  std::abort();
}

bool isFloatDtype(DataType dtype) {
  return dtype == DataType::kFloat16 || dtype == DataType::kBFloat16 || dtype == DataType::kFloat32 ||
         dtype == DataType::kFloat64 || dtype == DataType::kFloat8E4M3 || dtype == DataType::kFloat8E5M2;
}

bool isSignedIntDtype(DataType dtype) {
  return dtype == DataType::kInt8 || dtype == DataType::kInt32 || dtype == DataType::kInt64;
}

const char* dtypeText(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8:
      return "int8";
    case DataType::kUint8:
      return "uint8";
    case DataType::kInt32:
      return "int32";
    case DataType::kUint32:
      return "uint32";
    case DataType::kInt64:
      return "int64";
    case DataType::kUint64:
      return "uint64";
    case DataType::kFloat16:
      return "fp16";
    case DataType::kBFloat16:
      return "bf16";
    case DataType::kFloat32:
      return "fp32";
    case DataType::kFloat64:
      return "fp64";
    case DataType::kFloat8E4M3:
      return "fp8e4m3";
    case DataType::kFloat8E5M2:
      return "fp8e5m2";
  }
  return "invalid-dtype";
}

const char* opText(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kProd:
      return "prod";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kAvg:
      return "avg";
  }
  return "invalid-op";
}

// IEEE-style binary layout: value = (-1)^s * 2^(e - bias) * 1.m for normals, 2^(1 - bias) * 0.m for
// subnormals (e == 0), inf/NaN for e all ones. `finite` is fp8 e4m3's variation (OCP "e4m3fn"): no
// infinities, e all ones holds normals, and only e and m all ones is NaN.
struct FloatLayout {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool finite = false;
  // Whether every step of a reduction rounds to the storage type (the 8-bit floats, types.h), rather than
  // a sum running in fp32 or finer (the 16-bit floats) or in the storage type itself (fp32, fp64, where the
  // Higham bounds below hold as written).
  bool per_step = false;
};

FloatLayout floatLayout(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16:
      return {5, 10, 15};
    case DataType::kBFloat16:
      return {8, 7, 127};
    case DataType::kFloat32:
      return {8, 23, 127};
    case DataType::kFloat64:
      return {11, 52, 1023};
    case DataType::kFloat8E4M3:
      return {4, 3, 7, /*finite=*/true, /*per_step=*/true};
    case DataType::kFloat8E5M2:
      return {5, 2, 15, /*finite=*/false, /*per_step=*/true};
    default:
      dieOnMisuse("floatLayout of a non-floating dtype");
  }
}

// The largest finite biased exponent and, at it, the largest mantissa: the all-ones exponent minus one for
// IEEE layouts; e4m3 uses the all-ones exponent too, all but its all-ones mantissa (NaN).
std::uint64_t largestFiniteExponent(const FloatLayout& layout) {
  const std::uint64_t all_ones = (std::uint64_t{1} << layout.exponent_bits) - 1;
  return layout.finite ? all_ones : all_ones - 1;
}
std::uint64_t largestFiniteMantissa(const FloatLayout& layout) {
  const std::uint64_t all_ones = (std::uint64_t{1} << layout.mantissa_bits) - 1;
  return layout.finite ? all_ones - 1 : all_ones;
}

// The unit roundoff of the storage format: half an ulp of 1, 2^-(mantissa bits + 1).
long double unitRoundoff(const FloatLayout& layout) { return std::ldexp(1.0L, -(layout.mantissa_bits + 1)); }

// The smallest positive subnormal: 2^(1 - bias - mantissa bits). Rounding in the subnormal range has an
// absolute (not relative) error of up to half of it, which no relative bound covers.
long double smallestSubnormal(const FloatLayout& layout) {
  return std::ldexp(1.0L, 1 - layout.bias - layout.mantissa_bits);
}

std::uint64_t loadRawBits(DataType dtype, const void* base, std::size_t index) {
  const std::size_t size = referenceElementSize(dtype);
  const auto* bytes = static_cast<const unsigned char*>(base) + index * size;
  switch (size) {
    case 1: {
      std::uint8_t v;
      std::memcpy(&v, bytes, size);
      return v;
    }
    case 2: {
      std::uint16_t v;
      std::memcpy(&v, bytes, size);
      return v;
    }
    case 4: {
      std::uint32_t v;
      std::memcpy(&v, bytes, size);
      return v;
    }
    default: {
      std::uint64_t v;
      std::memcpy(&v, bytes, size);
      return v;
    }
  }
}

void storeRawBits(DataType dtype, void* base, std::size_t index, std::uint64_t bits) {
  const std::size_t size = referenceElementSize(dtype);
  auto* bytes = static_cast<unsigned char*>(base) + index * size;
  switch (size) {
    case 1: {
      const auto v = static_cast<std::uint8_t>(bits);
      std::memcpy(bytes, &v, size);
      return;
    }
    case 2: {
      const auto v = static_cast<std::uint16_t>(bits);
      std::memcpy(bytes, &v, size);
      return;
    }
    case 4: {
      const auto v = static_cast<std::uint32_t>(bits);
      std::memcpy(bytes, &v, size);
      return;
    }
    default:
      std::memcpy(bytes, &bits, size);
      return;
  }
}

// Integer helpers: values travel as uint64 holding the value modulo 2^64 (sign-extended for signed
// dtypes), so + and * in uint64 are the exact wrapped results once truncated to the dtype's width.
int intWidthBits(DataType dtype) { return static_cast<int>(referenceElementSize(dtype)) * CHAR_BIT; }

std::uint64_t truncateToWidth(DataType dtype, std::uint64_t value) {
  const int width = intWidthBits(dtype);
  if (width == 64) return value;
  return value & ((std::uint64_t{1} << width) - 1);
}

// Sign-extends a value truncated to the dtype's width (identity for unsigned dtypes).
std::uint64_t extendFromWidth(DataType dtype, std::uint64_t value) {
  value = truncateToWidth(dtype, value);
  const int width = intWidthBits(dtype);
  if (!isSignedIntDtype(dtype) || width == 64) return value;
  const std::uint64_t sign_bit = std::uint64_t{1} << (width - 1);
  return (value & sign_bit) != 0 ? value | ~((sign_bit << 1) - 1) : value;
}

std::int64_t asSigned(std::uint64_t value) { return static_cast<std::int64_t>(value); }  // modular since C++20

long double decodeFloatBits(const FloatLayout& layout, std::uint64_t bits) {
  const std::uint64_t mantissa = bits & ((std::uint64_t{1} << layout.mantissa_bits) - 1);
  const std::uint64_t exponent_max = (std::uint64_t{1} << layout.exponent_bits) - 1;
  const std::uint64_t exponent = (bits >> layout.mantissa_bits) & exponent_max;
  const bool negative = ((bits >> (layout.mantissa_bits + layout.exponent_bits)) & 1u) != 0;
  const std::uint64_t mantissa_max = (std::uint64_t{1} << layout.mantissa_bits) - 1;
  // IEEE: the all-ones exponent is inf or NaN; e4m3 (finite): only the all-ones exponent and mantissa, NaN.
  const bool special = exponent == exponent_max && (!layout.finite || mantissa == mantissa_max);
  long double magnitude;
  if (special) {
    magnitude =
        mantissa == 0 ? std::numeric_limits<long double>::infinity() : std::numeric_limits<long double>::quiet_NaN();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<long double>(mantissa), 1 - layout.bias - layout.mantissa_bits);
  } else {
    const std::uint64_t significand = mantissa | (std::uint64_t{1} << layout.mantissa_bits);
    magnitude = std::ldexp(static_cast<long double>(significand),
                           static_cast<int>(exponent) - layout.bias - layout.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

long double decodeFloatElement(DataType dtype, const void* base, std::size_t index) {
  return decodeFloatBits(floatLayout(dtype), loadRawBits(dtype, base, index));
}

std::string describeInt(DataType dtype, std::uint64_t bits) {
  std::ostringstream out;
  if (isSignedIntDtype(dtype)) {
    out << asSigned(extendFromWidth(dtype, bits));
  } else {
    out << truncateToWidth(dtype, bits);
  }
  return out.str();
}

std::string describeFloat(long double value) {
  char text[64];
  // 21 significant digits print a long double's 64-bit significand unambiguously.
  std::snprintf(text, sizeof(text), "%.21Lg", value);
  return text;
}

// ---- integer reference ----

void referenceIntegers(DataType dtype, ReduceOp op, const std::vector<const void*>& inputs, std::size_t count,
                       ReferenceResult& result) {
  const bool is_signed = isSignedIntDtype(dtype);
  const std::uint64_t n = inputs.size();
  result.exact_bytes.assign(count * referenceElementSize(dtype), 0);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t acc = extendFromWidth(dtype, loadRawBits(dtype, inputs[0], i));
    for (std::size_t k = 1; k < inputs.size(); ++k) {
      const std::uint64_t x = extendFromWidth(dtype, loadRawBits(dtype, inputs[k], i));
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kAvg:
          acc += x;
          break;
        case ReduceOp::kProd:
          acc *= x;
          break;
        case ReduceOp::kMin:
          if (is_signed ? asSigned(x) < asSigned(acc) : x < acc) acc = x;
          break;
        case ReduceOp::kMax:
          if (is_signed ? asSigned(x) > asSigned(acc) : x > acc) acc = x;
          break;
      }
    }
    acc = extendFromWidth(dtype, acc);  // the wrapped value in the dtype
    if (op == ReduceOp::kAvg) {
      // C++ integer division truncates toward zero, the semantics of types.h.
      acc = is_signed ? static_cast<std::uint64_t>(asSigned(acc) / static_cast<std::int64_t>(n)) : acc / n;
    }
    storeRawBits(dtype, result.exact_bytes.data(), i, acc);
  }
}

// ---- floating reference ----
//
// Tolerances (u = unit roundoff of the STORAGE dtype, n = number of inputs, S = sum of |x_k|, m = the
// smallest positive subnormal of the storage dtype, ref = the long double result):
// - sum: n*u*S + m. Recursive summation that rounds to a format with unit roundoff v after every
//   step is off by at most gamma_{n-1}(v) * S, gamma_j(v) = j*v / (1 - j*v) (Higham, Accuracy and
//   Stability, 4.2). For fp32/fp64 the accumulator is the storage type, v = u, and gamma_{n-1}(u) <= n*u
//   while n*(n-1)*u <= 1 (true for n <= 64 here). For fp16/bf16 the sum runs in fp32 (v = 2^-24 << u)
//   and is rounded once to storage: u*|S_hat| + gamma_{n-1}(2^-24)*S <= n*u*S for n >= 2 (n = 1 is
//   exact). The final rounding may land in the subnormal range, where its error is absolute: + m.
// - avg (NCCL's premultiplied sum, types.h): each input enters the sum as t_k = x_k * r rounded to the
//   dtype, r = 1/n rounded (through fp64 and fp32) to the dtype, relative error <= 1.01*u (the fp64 and
//   fp32 roundings before the dtype's add far less than 0.01*u). So |t_k - x_k/n| <= 2.02*u*|x_k|/n + m/2
//   ((1 + 1.01u)(1 + u) - 1 <= 2.02u; the product may round among subnormals, an absolute error of at most
//   m/2). The terms are then summed with n-1 roundings, to storage or finer (ring and tree partials are
//   stored in the dtype; a one-shot's fp32 sum of a 16-bit dtype is rounded once to storage, within the
//   same bound for n >= 2), off by at most gamma_{n-1}(u) * sum|t_k| for any order (Higham 4.2, gamma_j(u)
//   = j*u / (1 - j*u)), and sum|t_k| <= (1 + 2.02u) S/n + n*m/2; a last rounding among subnormals adds m.
//   Total: 2.02u*S/n + n*m/2 + gamma_{n-1}(u) * ((1 + 2.02u) S/n + n*m/2) + m. No division follows.
// - prod: 1.01*n*u*|ref| + m. Each multiplication rounds with relative error <= v, so n-1 of them and
//   one final rounding to storage stay within (1 + v)^(n-1) * (1 + u) - 1 <= 1.01*n*u for n*u <= 0.01
//   (the payloads keep products in the normal range, where relative bounds hold).
// - min/max: 0. Selecting an input is exact; the result must be one of the inputs' values.
// The 8-bit floats (layout.per_step) round every pairwise step to storage, so v = u (2^-4 for e4m3, 2^-3 for
// e5m2) and n*u reaches 4 and 8: Higham's gamma bounds, and the linearised n*u ones, no longer apply. Their
// exact forms do, with G = (1 + u)^(n-1) - 1 (the growth of n-1 roundings, at most gamma_{n-1}(u) where that
// is defined):
// - sum: G*S + m. Each of the n-1 additions (in any order, any tree) is off by at most u times its computed
//   result, whose magnitude is at most (1 + u)^j times the sum of |x| beneath it; summed, G*S. A result in
//   the subnormal range is exact (a sum of multiples of m). e4m3 saturates at 448, but never here: typical
//   fp8 payloads have |x| <= 3.75, and since rounding is monotone a computed partial of k of them is at most
//   the worst over every binary tree of k leaves, 288 for 64 (exhaustively computed, round to nearest even
//   at each node), far below 448; e5m2 cannot overflow at all with them.
// - avg: r's relative error is at most 1.01u (fp8 rounding after fp32's 2^-24) and the product's at most u,
//   so a term is off by at most rho*|x_k|/n + m/2, rho = (1 + 1.01u)(1 + u) - 1; the terms' sum then adds
//   G times their magnitudes, as for sum: rho*S/n + n*m/2 + G*((1 + rho) S/n + n*m/2) + m.
// - prod: G*|ref| + m. Each multiplication rounds with relative error at most u: the computed product is the
//   exact one times prod(1 + delta_j), |delta_j| <= u, while it stays normal. fp8 prod payloads have
//   magnitudes in [0.875, 1], so |ref| <= 1 and no partial overflows; a partial that drifts into the
//   subnormal range (possible only where G >= 1: n >= 13 for e4m3, n >= 7 for e5m2, below that every partial
//   stays above 0.24) ends between 0 and the exact product's magnitude, off by at most |ref| <= G*|ref|.
// - min/max: 0.
// The long double arithmetic of the reference itself (64-bit significand) is accurate to far below
// these bounds.
// The 8-bit floats' tolerance (see above): `acc` the exact result (for avg, the sum before the division),
// `abs_sum` the sum of the inputs' magnitudes, n the number of inputs.
long double perStepTolerance(ReduceOp op, long double u, long double m, long double n, long double abs_sum,
                             long double acc) {
  // r = 1/n through fp64 and fp32 to the dtype: fp32's 2^-24 is far below 0.01 u.
  constexpr long double kReciprocalSlack = 1.01L;
  const long double growth = std::pow(1.0L + u, n - 1.0L) - 1.0L;
  switch (op) {
    case ReduceOp::kSum:
      return growth * abs_sum + m;
    case ReduceOp::kAvg: {
      const long double rho = (1.0L + kReciprocalSlack * u) * (1.0L + u) - 1.0L;
      const long double terms_bound = (1.0L + rho) * abs_sum / n + n * m / 2.0L;
      return rho * abs_sum / n + n * m / 2.0L + growth * terms_bound + m;
    }
    case ReduceOp::kProd:
      return growth * std::fabs(acc) + m;
    case ReduceOp::kMin:
    case ReduceOp::kMax:
      return 0.0L;
  }
  return 0.0L;
}

void referenceFloats(DataType dtype, ReduceOp op, const std::vector<const void*>& inputs, std::size_t count,
                     ReferenceResult& result) {
  const FloatLayout layout = floatLayout(dtype);
  const long double u = unitRoundoff(layout);
  const long double m = smallestSubnormal(layout);
  // Slack on the product bound, see above.
  constexpr long double kProdBoundSlack = 1.01L;
  // avg's premultiplied term: the reciprocal's and the product's roundings, relative, see above.
  constexpr long double kPremultiplyRoundings = 2.02L;
  const auto n = static_cast<long double>(inputs.size());
  result.expected.resize(count);
  result.tolerance.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    long double acc = decodeFloatElement(dtype, inputs[0], i);
    long double abs_sum = std::fabs(acc);
    for (std::size_t k = 1; k < inputs.size(); ++k) {
      const long double x = decodeFloatElement(dtype, inputs[k], i);
      abs_sum += std::fabs(x);
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kAvg:
          acc += x;
          break;
        case ReduceOp::kProd:
          acc *= x;
          break;
        case ReduceOp::kMin:
          if (std::isnan(acc) || std::isnan(x)) {
            acc = std::numeric_limits<long double>::quiet_NaN();
          } else if (x < acc) {
            acc = x;
          }
          break;
        case ReduceOp::kMax:
          if (std::isnan(acc) || std::isnan(x)) {
            acc = std::numeric_limits<long double>::quiet_NaN();
          } else if (x > acc) {
            acc = x;
          }
          break;
      }
    }
    long double tolerance = 0.0L;
    if (layout.per_step) {
      tolerance = perStepTolerance(op, u, m, n, abs_sum, acc);
      if (op == ReduceOp::kAvg) acc /= n;
      result.expected[i] = acc;
      result.tolerance[i] = tolerance;
      continue;
    }
    switch (op) {
      case ReduceOp::kSum:
        tolerance = n * u * abs_sum + m;
        break;
      case ReduceOp::kAvg: {
        acc /= n;
        const long double additions = n - 1.0L;
        const long double gamma = additions * u / (1.0L - additions * u);
        const long double terms_bound = (1.0L + kPremultiplyRoundings * u) * abs_sum / n + n * m / 2.0L;
        tolerance = kPremultiplyRoundings * u * abs_sum / n + n * m / 2.0L + gamma * terms_bound + m;
        break;
      }
      case ReduceOp::kProd:
        tolerance = kProdBoundSlack * n * u * std::fabs(acc) + m;
        break;
      case ReduceOp::kMin:
      case ReduceOp::kMax:
        tolerance = 0.0L;
        break;
    }
    result.expected[i] = acc;
    result.tolerance[i] = tolerance;
  }
}

bool floatMatches(long double got, long double expected, long double tolerance) {
  if (std::isnan(expected) || std::isnan(got)) return std::isnan(expected) && std::isnan(got);
  if (std::isinf(expected) || std::isinf(got)) return got == expected;  // same-signed infinity
  return std::fabs(got - expected) <= tolerance;
}

// ---- payloads ----

// splitmix64 (Steele, Lea, Flood 2014): a tiny generator whose output is the same on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

  std::uint64_t next() {
    // The constants are the published splitmix64 increment (2^64 / golden ratio) and finalizer.
    state_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform enough in [lo, hi] for test data (the modulo bias is below 2^-50 for these small ranges).
  std::uint64_t inRange(std::uint64_t lo, std::uint64_t hi) { return lo + next() % (hi - lo + 1); }

  // True with probability 1 / denominator.
  bool oneIn(std::uint64_t denominator) { return next() % denominator == 0; }

 private:
  std::uint64_t state_;
};

// Stream separation: rank and (dtype, op) are hashed into the seed so that every rank's payload differs.
std::uint64_t payloadSeed(std::uint64_t case_seed, int rank, DataType dtype, ReduceOp op) {
  SplitMix64 rank_mix(static_cast<std::uint64_t>(rank));
  SplitMix64 kind_mix(static_cast<std::uint64_t>(static_cast<int>(dtype)) * kReduceOpCount +
                      static_cast<std::uint64_t>(static_cast<int>(op)));
  SplitMix64 seed_mix(case_seed ^ rank_mix.next() ^ (kind_mix.next() << 1));
  return seed_mix.next();
}

// One chance in this many of a special value (signed zero, subnormal) in float payloads: frequent enough
// to appear in most buffers, rare enough that sums stay typical.
constexpr std::uint64_t kSpecialValueOdds = 32;
// Float payload exponents for sum/avg/min/max: magnitudes in [2^-12, 2^3) = [~0.00024, 8).
constexpr int kPayloadExponentMin = -12;
constexpr int kPayloadExponentMax = 2;
// The 8-bit floats' (fp8's exponent range is narrow, e4m3's normals start at 2^-6): magnitudes in [2^-3, 2^2)
// = [0.125, 3.75], so no sum of 64 of them, in any order, saturates e4m3 (see the tolerances above).
constexpr int kFloat8PayloadExponentMin = -3;
constexpr int kFloat8PayloadExponentMax = 1;
// Integer prod payloads: one value in kFullRangeProdOdds is full-range bits; the rest are small
// nonzero values so that products over many ranks stay interesting (a 0 would absorb them all).
constexpr std::uint64_t kFullRangeProdOdds = 8;
constexpr std::int64_t kSmallProdValues[] = {-3, -2, -1, 1, 2, 3};
constexpr std::uint64_t kSmallUnsignedProdValues[] = {1, 2, 3};
// Float prod payload magnitudes lie in [0.9, 1.1]: 64 factors stay in [0.9^64, 1.1^64] ~ [0.0012, 446],
// well inside fp16's normal range [2^-14, 65504]. The 8-bit floats have no value in (1, 1.1] and e5m2 none
// in [0.9, 1): theirs are 1 and the largest value below 1 (e4m3 0.9375, e5m2 0.875), products in [0.0156, 1]
// (e4m3) and [0.0002, 1] (e5m2), normal.
constexpr std::uint64_t kProdSpreadTenths = 1;  // 1.1 = 1 + 1/10; 0.9 = 1 - 1/10

std::uint64_t assembleFloat(const FloatLayout& layout, bool negative, std::uint64_t biased_exponent,
                            std::uint64_t mantissa) {
  const std::uint64_t sign = negative ? std::uint64_t{1} << (layout.exponent_bits + layout.mantissa_bits) : 0;
  return sign | (biased_exponent << layout.mantissa_bits) | mantissa;
}

std::uint64_t floatPayloadBits(const FloatLayout& layout, ReduceOp op, SplitMix64& rng) {
  const std::uint64_t mantissa_count = std::uint64_t{1} << layout.mantissa_bits;
  const bool negative = (rng.next() & 1u) != 0;
  if (op == ReduceOp::kProd) {
    if ((rng.next() & 1u) != 0) {
      // [1, 1.1]: exponent 0, fraction in [0, 2^M / 10].
      return assembleFloat(layout, negative, static_cast<std::uint64_t>(layout.bias),
                           rng.inRange(0, mantissa_count * kProdSpreadTenths / 10));
    }
    // [0.9, 1): exponent -1, significand 1.f in [1.8, 2): fraction in [ceil(0.8 * 2^M), 2^M - 1]; a format too
    // coarse for that range (e5m2) takes the largest value below 1.
    const std::uint64_t lowest = std::min((mantissa_count * (10 - 2 * kProdSpreadTenths) + 9) / 10, mantissa_count - 1);
    return assembleFloat(layout, negative, static_cast<std::uint64_t>(layout.bias - 1),
                         rng.inRange(lowest, mantissa_count - 1));
  }
  if (rng.oneIn(kSpecialValueOdds)) return assembleFloat(layout, negative, 0, 0);  // +-0
  if (rng.oneIn(kSpecialValueOdds)) {
    return assembleFloat(layout, negative, 0, rng.inRange(1, mantissa_count - 1));  // subnormal
  }
  const int exponent_min = layout.per_step ? kFloat8PayloadExponentMin : kPayloadExponentMin;
  const int exponent_max = layout.per_step ? kFloat8PayloadExponentMax : kPayloadExponentMax;
  const auto exponent = static_cast<std::uint64_t>(
      static_cast<std::int64_t>(rng.inRange(0, static_cast<std::uint64_t>(exponent_max - exponent_min))) +
      exponent_min + layout.bias);
  return assembleFloat(layout, negative, exponent, rng.next() & (mantissa_count - 1));
}

// Large float payloads: magnitudes in [2^(emax-1), MAX/2] (about [MAX/4, MAX/2]), the binade just below
// the largest one (2^emax = MAX/2 + half an ulp), whose sums overflow (four of one sign reach 2^(emax+1) >
// MAX) while their average cannot (the premultiplied terms and their rounded sums stay below MAX, types.h).
// The largest finite biased exponent is the one below all ones (inf/NaN); e4m3's is all ones, its largest
// value 1.75 x 2^8, so in the binade below only mantissas up to 6 stay within MAX/2 (1.75 x 2^7). The sums
// of e4m3 saturate rather than overflow.
// One element in this many takes a sign of its own per rank; the others share one sign across ranks, so
// their sums grow as large as the inputs allow.
constexpr std::uint64_t kMixedSignOdds = 8;

std::uint64_t largeFloatBits(const FloatLayout& layout, bool negative, SplitMix64& rng) {
  return assembleFloat(layout, negative, largestFiniteExponent(layout) - 1,
                       rng.inRange(0, largestFiniteMantissa(layout)));
}

std::uint64_t intPayloadBits(DataType dtype, ReduceOp op, SplitMix64& rng) {
  if (op != ReduceOp::kProd || rng.oneIn(kFullRangeProdOdds)) return rng.next();
  if (isSignedIntDtype(dtype)) {
    constexpr std::uint64_t kCount = sizeof(kSmallProdValues) / sizeof(kSmallProdValues[0]);
    return static_cast<std::uint64_t>(kSmallProdValues[rng.inRange(0, kCount - 1)]);
  }
  constexpr std::uint64_t kCount = sizeof(kSmallUnsignedProdValues) / sizeof(kSmallUnsignedProdValues[0]);
  return kSmallUnsignedProdValues[rng.inRange(0, kCount - 1)];
}

}  // namespace

std::size_t referenceElementSize(DataType dtype) {
  switch (dtype) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
      return 1;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64:
      return 8;
  }
  dieOnMisuse("referenceElementSize of an invalid dtype");
}

double decodeElement(DataType dtype, const void* base, std::size_t index) {
  if (isFloatDtype(dtype)) return static_cast<double>(decodeFloatElement(dtype, base, index));
  const std::uint64_t value = extendFromWidth(dtype, loadRawBits(dtype, base, index));
  return isSignedIntDtype(dtype) ? static_cast<double>(asSigned(value)) : static_cast<double>(value);
}

std::uint64_t roundToFloatBits(DataType dtype, long double value) {
  if (!isFloatDtype(dtype)) dieOnMisuse("roundToFloatBits of a non-floating dtype");
  const FloatLayout layout = floatLayout(dtype);
  const int m_bits = layout.mantissa_bits;
  const std::uint64_t exponent_all_ones = (std::uint64_t{1} << layout.exponent_bits) - 1;
  const std::uint64_t mantissa_all_ones = (std::uint64_t{1} << m_bits) - 1;
  const bool negative = std::signbit(value);
  if (std::isnan(value)) {
    // e4m3: its one NaN of the sign; IEEE: the quiet NaN (top mantissa bit).
    const std::uint64_t mantissa = layout.finite ? mantissa_all_ones : std::uint64_t{1} << (m_bits - 1);
    return assembleFloat(layout, negative, exponent_all_ones, mantissa);
  }
  const std::uint64_t max_exponent = largestFiniteExponent(layout);
  const std::uint64_t max_mantissa = largestFiniteMantissa(layout);
  const long double max_finite =
      std::fabs(decodeFloatBits(layout, assembleFloat(layout, false, max_exponent, max_mantissa)));
  const long double magnitude = std::fabs(value);
  const int min_exponent = 1 - layout.bias;  // of the smallest normal; subnormals share its quantum
  long double rounded = magnitude;
  if (std::isfinite(magnitude) && magnitude != 0.0L) {
    const int exponent = std::max(std::ilogb(magnitude), min_exponent);
    const long double quantum = std::ldexp(1.0L, exponent - m_bits);
    rounded = std::nearbyint(magnitude / quantum) * quantum;  // both scalings exact: powers of two
  }
  if (rounded > max_finite) {  // infinity included
    return layout.finite ? assembleFloat(layout, negative, max_exponent, max_mantissa)
                         : assembleFloat(layout, negative, exponent_all_ones, 0);
  }
  if (rounded < std::ldexp(1.0L, min_exponent)) {
    // Subnormal or zero: a multiple of the subnormal quantum 2^(min_exponent - M).
    const auto units = static_cast<std::uint64_t>(std::ldexp(rounded, m_bits - min_exponent));
    return assembleFloat(layout, negative, 0, units);
  }
  const int exponent = std::ilogb(rounded);
  const auto significand = static_cast<std::uint64_t>(std::ldexp(rounded, m_bits - exponent));
  return assembleFloat(layout, negative, static_cast<std::uint64_t>(exponent + layout.bias),
                       significand & mantissa_all_ones);
}

ReferenceResult referenceReduce(DataType dtype, ReduceOp op, const std::vector<const void*>& inputs,
                                std::size_t count) {
  if (inputs.empty()) dieOnMisuse("referenceReduce needs at least one input");
  ReferenceResult result;
  result.dtype = dtype;
  result.op = op;
  result.count = count;
  if (isFloatDtype(dtype)) {
    referenceFloats(dtype, op, inputs, count, result);
  } else {
    referenceIntegers(dtype, op, inputs, count, result);
  }
  return result;
}

std::string compareToReference(DataType dtype, ReduceOp op, const ReferenceResult& ref, const void* actual,
                               std::size_t count) {
  if (ref.dtype != dtype || ref.op != op || ref.count != count) {
    return "reference was computed for a different dtype, op or count";
  }
  std::size_t bad = 0;
  std::string first;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t got_bits = loadRawBits(dtype, actual, i);
    bool ok;
    // Made only for the first bad element: a stream per element (its locale and facets) cost more than the
    // comparison itself, and every case of the property suites compares every element.
    std::optional<std::ostringstream> detail;
    if (isFloatDtype(dtype)) {
      const long double got = decodeFloatBits(floatLayout(dtype), got_bits);
      ok = floatMatches(got, ref.expected[i], ref.tolerance[i]);
      if (!ok && bad == 0) {
        detail.emplace() << "got " << describeFloat(got) << " (bits 0x" << std::hex << got_bits << std::dec
                         << "), expected " << describeFloat(ref.expected[i]) << " with tolerance "
                         << describeFloat(ref.tolerance[i]);
      }
    } else {
      const std::uint64_t want_bits = loadRawBits(dtype, ref.exact_bytes.data(), i);
      ok = got_bits == want_bits;
      if (!ok && bad == 0) {
        detail.emplace() << "got " << describeInt(dtype, got_bits) << ", expected " << describeInt(dtype, want_bits)
                         << " (exact)";
      }
    }
    if (!ok) {
      if (bad == 0) first = "first bad element at index " + std::to_string(i) + ": " + detail->str();
      ++bad;
    }
  }
  if (bad == 0) return "";
  std::ostringstream message;
  message << dtypeText(dtype) << " " << opText(op) << ": " << bad << " of " << count << " elements bad; " << first;
  return message.str();
}

void fillPayload(DataType dtype, ReduceOp op, std::uint64_t case_seed, int rank, void* dst, std::size_t count,
                 Payload payload) {
  SplitMix64 rng(payloadSeed(case_seed, rank, dtype, op));
  if (isFloatDtype(dtype) && payload == Payload::kLarge) {
    // The shared signs come from a stream of the case alone (the same on every rank).
    constexpr int kSharedStream = -1;
    SplitMix64 signs(payloadSeed(case_seed, kSharedStream, dtype, op));
    const FloatLayout layout = floatLayout(dtype);
    for (std::size_t i = 0; i < count; ++i) {
      const bool shared_negative = (signs.next() & 1u) != 0;
      const bool own_sign = signs.oneIn(kMixedSignOdds);
      const bool negative = own_sign ? (rng.next() & 1u) != 0 : shared_negative;
      storeRawBits(dtype, dst, i, largeFloatBits(layout, negative, rng));
    }
  } else if (isFloatDtype(dtype)) {
    const FloatLayout layout = floatLayout(dtype);
    for (std::size_t i = 0; i < count; ++i) storeRawBits(dtype, dst, i, floatPayloadBits(layout, op, rng));
  } else {
    static_cast<void>(referenceElementSize(dtype));  // aborts on an invalid dtype before writing anything
    for (std::size_t i = 0; i < count; ++i) storeRawBits(dtype, dst, i, intPayloadBits(dtype, op, rng));
  }
}

}  // namespace peerreduce::testing
