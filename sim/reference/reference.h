// An independent reference for the reduce arithmetic, and deterministic test payloads.
//
// Independence: nothing here includes or calls kernels/ (nor lib/ code; only the enums of
// peerreduce/types.h), so a bug there cannot hide behind the same bug here. The 16-bit and 8-bit floats
// are decoded arithmetically (ldexp of the sign/exponent/mantissa fields) and payloads are built from the
// fields directly, never by the kernels' bit conversions.
//
// What is checked:
// - Integer dtypes: the exact expected bits (sum/prod wrap modulo 2^bits, min/max exact, avg = wrapped
//   sum / number of inputs truncated toward zero). Comparison is bit for bit.
// - Floating dtypes: the (nearly) exact value computed in long double, and a per-element absolute
//   tolerance that any correct implementation of types.h's semantics meets (see reference.cc for the
//   bound and why it holds; avg's is that of NCCL's premultiplied sum: every input times 1/n, rounded,
//   then summed; the 8-bit floats round every step to fp8, so theirs grows as (1 + u)^(n-1)). min/max are
//   exact (tolerance 0). NaN must match NaN, inf the same inf, and an infinite
//   result never matches a finite expected value (an average that overflows is wrong).
//
// Thread safety: all functions are pure (no shared state).
//
// Example:
//   std::vector<const void*> inputs = {rank0.data(), rank1.data()};
//   ReferenceResult ref = referenceReduce(DataType::kFloat16, ReduceOp::kSum, inputs, n);
//   EXPECT_EQ(compareToReference(DataType::kFloat16, ReduceOp::kSum, ref, out.data(), n), "");
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "peerreduce/types.h"

namespace peerreduce::testing {

// Bytes per element of a valid dtype (kept here rather than calling lib's dataTypeSize, see above).
std::size_t referenceElementSize(DataType dtype);

// Decodes element `index` of an array of `dtype` at `base` (any alignment) to double. Exact for every
// dtype except int64/uint64 beyond 2^53, which are rounded: use them for tolerances only, never for
// integer checks.
double decodeElement(DataType dtype, const void* base, std::size_t index);

// `value` rounded to the float dtype `dtype` (round to nearest, ties to even), as the dtype's bits: what an
// exact result becomes when an implementation rounds it once. Overflow follows the dtype's rule: infinity for
// the IEEE formats and fp8 e5m2, saturation at +-448 for fp8 e4m3 (no infinity; infinite values saturate
// too); results below the normal range round among the subnormals; zero keeps its sign; NaN gives a quiet NaN
// of its sign. Computed from the value's binade with ldexp and nearbyint (the default rounding mode), never
// by the kernels' conversions. Precondition: a float dtype (aborts otherwise).
std::uint64_t roundToFloatBits(DataType dtype, long double value);

struct ReferenceResult {
  DataType dtype = DataType::kInt8;
  ReduceOp op = ReduceOp::kSum;
  std::size_t count = 0;
  // Integer dtypes: the exact expected output, count * element size bytes. Empty for floats.
  std::vector<std::uint8_t> exact_bytes;
  // Floating dtypes: expected value and absolute tolerance per element. Empty for integers.
  std::vector<long double> expected;
  std::vector<long double> tolerance;
};

// The expected result of reducing `inputs` (one buffer of `count` elements per rank, in rank order) with
// `op`; avg divides by inputs.size(). Precondition: inputs is not empty (aborts otherwise).
ReferenceResult referenceReduce(DataType dtype, ReduceOp op, const std::vector<const void*>& inputs, std::size_t count);

// "" when every element of `actual` matches `ref` (exactly for integers, within tolerance for floats),
// otherwise a message naming the first bad index, its got/expected values and tolerance, and the number
// of bad elements.
std::string compareToReference(DataType dtype, ReduceOp op, const ReferenceResult& ref, const void* actual,
                               std::size_t count);

// The other collectives. `inputs`: every rank's send buffer in rank order (reduce-scatter: size x count
// elements each; all-gather and broadcast: count).
// reduce-scatter: what rank `rank` receives, the reduction of block `rank` of every input.
ReferenceResult referenceReduceScatter(DataType dtype, ReduceOp op, const std::vector<const void*>& inputs,
                                       std::size_t count, int rank);
// all-gather: the bytes every rank receives, every input in rank order.
std::vector<std::uint8_t> referenceAllGather(DataType dtype, const std::vector<const void*>& inputs, std::size_t count);
// broadcast: the bytes every rank receives, the root's input.
std::vector<std::uint8_t> referenceBroadcast(DataType dtype, const std::vector<const void*>& inputs, std::size_t count,
                                             int root);
// "" when `actual` holds exactly `expected`'s bytes, otherwise the first differing element and how many.
std::string compareExactly(DataType dtype, const std::vector<std::uint8_t>& expected, const void* actual);

// What a payload's float values look like (integers are full-range bits either way).
enum class Payload {
  kTypical,  // see fillPayload
  kLarge,    // magnitudes in [2^(emax-1), MAX/2], about [MAX/4, MAX/2]: sums overflow, averages do not (types.h)
};

// Fills `count` elements at dst with a payload that depends only on (case_seed, rank, dtype, op,
// payload), the same on every platform. Integers: random full-range bits (prod: mostly values in
// [-3, 3], or [0, 3] unsigned, so products do not collapse to 0). Typical floats: sum/avg/min/max
// magnitudes in [2^-12, 8) with a random sign and exponent and a few signed zeros; prod magnitudes in
// [0.9, 1.1] with a random sign, so a product of 64 ranks stays far inside the fp16 normal range (the 8-bit
// floats: sum/avg/min/max magnitudes in [0.125, 3.75], prod magnitudes 1 and the largest value below 1). Large
// floats: magnitudes in the binade below the largest one, [2^(emax-1), MAX/2]; most elements have one sign on
// every rank (so their sums are as large as can be), one in eight a sign per rank. Every value
// is exactly representable in the dtype; never NaN or inf.
void fillPayload(DataType dtype, ReduceOp op, std::uint64_t case_seed, int rank, void* dst, std::size_t count,
                 Payload payload = Payload::kTypical);

}  // namespace peerreduce::testing
