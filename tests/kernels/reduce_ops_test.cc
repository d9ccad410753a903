// The per-element reduce arithmetic (reduce_ops.h) and its host dispatch (hostReduce), checked against
// the independent reference in tests/support and against hand-computed values.
#include "reduce_ops.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "dispatch.h"
#include "float16.h"
#include "host_reduce.h"
#include "reference/reference.h"

namespace peerreduce::kernels {
namespace {

using peerreduce::testing::compareToReference;
using peerreduce::testing::fillPayload;
using peerreduce::testing::referenceElementSize;
using peerreduce::testing::referenceReduce;

static_assert(std::is_same_v<AccumulatorT<Half>, float>);
static_assert(std::is_same_v<AccumulatorT<BFloat16>, float>);
static_assert(std::is_same_v<AccumulatorT<float>, float>);
static_assert(std::is_same_v<AccumulatorT<double>, double>);
// The 8-bit floats accumulate in themselves: every step rounds (float8_test.cc checks each step).
static_assert(std::is_same_v<AccumulatorT<Float8E4M3>, Float8E4M3>);
static_assert(std::is_same_v<AccumulatorT<Float8E5M2>, Float8E5M2>);
static_assert(kAvgPremultiplies<Float8E4M3> && kAvgPremultiplies<Float8E5M2> && !kAvgPremultiplies<std::uint8_t>);
static_assert(std::is_same_v<AccumulatorT<std::int8_t>, std::int8_t>);
static_assert(std::is_same_v<AccumulatorT<std::uint8_t>, std::uint8_t>);
static_assert(std::is_same_v<AccumulatorT<std::int32_t>, std::int32_t>);
static_assert(std::is_same_v<AccumulatorT<std::uint32_t>, std::uint32_t>);
static_assert(std::is_same_v<AccumulatorT<std::int64_t>, std::int64_t>);
static_assert(std::is_same_v<AccumulatorT<std::uint64_t>, std::uint64_t>);

// ---- helpers: run reduceElements<T, Op> for a run-time dtype and op ----

// The element type of `dtype`, through the dispatch the library uses (dispatch.h).
template <typename F>
void withElementType(DataType dtype, F&& f) {
  const bool known = visitDataType(static_cast<int>(dtype), false, [&](auto type) {
    f(type);
    return true;
  });
  if (!known) FAIL() << "invalid dtype";
}

template <typename T>
void reduceElementsFor(ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count,
                       const AvgStep& avg) {
  std::vector<const T*> typed;
  for (const void* src : srcs) typed.push_back(static_cast<const T*>(src));
  T* out = static_cast<T*>(dst);
  const int nsrc = static_cast<int>(srcs.size());
  switch (op) {
    case ReduceOp::kSum:
      return reduceElements<T, Sum>(out, typed.data(), nsrc, count);
    case ReduceOp::kProd:
      return reduceElements<T, Prod>(out, typed.data(), nsrc, count);
    case ReduceOp::kMin:
      return reduceElements<T, Min>(out, typed.data(), nsrc, count);
    case ReduceOp::kMax:
      return reduceElements<T, Max>(out, typed.data(), nsrc, count);
    case ReduceOp::kAvg:
      return reduceElements<T, Avg>(out, typed.data(), nsrc, count, avg);
  }
}

void reduceElementsDynamic(DataType dtype, ReduceOp op, void* dst, const std::vector<const void*>& srcs,
                           std::size_t count, const AvgStep& avg) {
  withElementType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduceElementsFor<T>(op, dst, srcs, count, avg);
  });
}

// A whole average in one reduction, as a one-shot computes it: every source a send buffer, the reduction
// final. `from_send` must outlive the returned step.
AvgStep wholeAverage(const std::vector<std::uint8_t>& from_send) {
  return AvgStep{true, static_cast<int>(from_send.size()), true, from_send.data()};
}

// Per-rank buffers backed by uint64 words, so every dtype is naturally aligned.
class Buffers {
 public:
  Buffers(DataType dtype, int ranks, std::size_t count)
      : element_size_(referenceElementSize(dtype)),
        words_(count * element_size_ / sizeof(std::uint64_t) + 1),
        storage_(static_cast<std::size_t>(ranks), std::vector<std::uint64_t>(words_)) {}

  void* rank(int r) { return storage_[static_cast<std::size_t>(r)].data(); }
  std::vector<const void*> pointers() const {
    std::vector<const void*> out;
    for (const auto& buffer : storage_) out.push_back(buffer.data());
    return out;
  }
  std::vector<std::uint64_t> newOutput() const { return std::vector<std::uint64_t>(words_); }
  std::size_t bytes(std::size_t count) const { return count * element_size_; }

 private:
  std::size_t element_size_;
  std::size_t words_;
  std::vector<std::vector<std::uint64_t>> storage_;
};

// rc::gen::inRange scales its range with the test size (small values first), which suits nsrc and count;
// dtype, op, seed and full-range integers must be uniform from the first case on, so their size is pinned to the
// maximum.
template <typename T>
rc::Gen<T> uniformValueIn(T low, T high_exclusive) {
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(low, high_exclusive));
}

bool sameBytes(const void* a, const void* b, std::size_t bytes) { return std::memcmp(a, b, bytes) == 0; }

// ---- integer semantics ----

TEST(ReduceOps, IntegerSumWrapsLikeTwosComplement) {
  EXPECT_EQ(Sum::apply<std::int8_t>(127, 1), -128);
  EXPECT_EQ(Sum::apply<std::int8_t>(-128, -1), 127);
  EXPECT_EQ(Sum::apply<std::uint8_t>(255, 1), 0);
  EXPECT_EQ(Sum::apply<std::int32_t>(std::numeric_limits<std::int32_t>::max(), 1),
            std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(Sum::apply<std::uint32_t>(0xffffffffu, 2u), 1u);
  EXPECT_EQ(Sum::apply<std::int64_t>(std::numeric_limits<std::int64_t>::max(), 1),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(Sum::apply<std::int64_t>(std::numeric_limits<std::int64_t>::min(), -1),
            std::numeric_limits<std::int64_t>::max());
}

TEST(ReduceOps, IntegerProdWrapsLikeTwosComplement) {
  EXPECT_EQ(Prod::apply<std::int8_t>(16, 16), 0);
  EXPECT_EQ(Prod::apply<std::int8_t>(100, 3), 44);  // 300 mod 256
  EXPECT_EQ(Prod::apply<std::int8_t>(-128, -1), -128);
  EXPECT_EQ(Prod::apply<std::uint8_t>(255, 255), 1);  // 65025 mod 256
  EXPECT_EQ(Prod::apply<std::int32_t>(65536, 65536), 0);
  EXPECT_EQ(Prod::apply<std::int32_t>(std::numeric_limits<std::int32_t>::min(), -1),
            std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(Prod::apply<std::uint32_t>(0xffffffffu, 0xffffffffu), 1u);
  EXPECT_EQ(Prod::apply<std::int64_t>(std::numeric_limits<std::int64_t>::min(), -1),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(Prod::apply<std::int64_t>(std::numeric_limits<std::int64_t>::max(), 2), -2);
  EXPECT_EQ(Prod::apply<std::uint64_t>(~std::uint64_t{0}, ~std::uint64_t{0}), 1u);
}

// Wrapped results computed another way: in uint64 (modulo 2^64) on sign-extended values, then
// truncated to T's width, which is the value modulo 2^bits.
template <typename T>
void checkWrappingAgainstUint64(T a, T b) {
  const auto wide_a =
      static_cast<std::uint64_t>(static_cast<std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>(a));
  const auto wide_b =
      static_cast<std::uint64_t>(static_cast<std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>(b));
  const auto want_sum = static_cast<T>(wide_a + wide_b);
  const auto want_prod = static_cast<T>(wide_a * wide_b);
  RC_ASSERT(Sum::apply<T>(a, b) == want_sum);
  RC_ASSERT(Prod::apply<T>(a, b) == want_prod);
}

RC_GTEST_PROP(ReduceOps, Int8WrapsLikeUnsignedArithmetic, (std::int8_t a, std::int8_t b)) {
  checkWrappingAgainstUint64(a, b);
}
RC_GTEST_PROP(ReduceOps, Uint8WrapsLikeUnsignedArithmetic, (std::uint8_t a, std::uint8_t b)) {
  checkWrappingAgainstUint64(a, b);
}
RC_GTEST_PROP(ReduceOps, Int32WrapsLikeUnsignedArithmetic, ()) {
  const auto a = *uniformValueIn(std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max());
  const auto b = *rc::gen::arbitrary<std::int32_t>();  // size-scaled: small values, where signs mix
  checkWrappingAgainstUint64(a, b);
}
RC_GTEST_PROP(ReduceOps, Int64WrapsLikeUnsignedArithmetic, ()) {
  const auto a = *uniformValueIn(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
  const auto b = *uniformValueIn(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
  checkWrappingAgainstUint64(a, b);
}

TEST(ReduceOps, IntegerAvgTruncatesTowardZero) {
  EXPECT_EQ(finalizeAvg<std::int32_t>(-7, 2), -3);
  EXPECT_EQ(finalizeAvg<std::int32_t>(7, 2), 3);
  EXPECT_EQ(finalizeAvg<std::int32_t>(-7, 4), -1);
  EXPECT_EQ(finalizeAvg<std::int32_t>(-3, 4), 0);
  EXPECT_EQ(finalizeAvg<std::int32_t>(std::numeric_limits<std::int32_t>::min(), 1),
            std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(finalizeAvg<std::int32_t>(std::numeric_limits<std::int32_t>::min(), 3), -715827882);
  EXPECT_EQ(finalizeAvg<std::int64_t>(std::numeric_limits<std::int64_t>::min(), 2),
            std::numeric_limits<std::int64_t>::min() / 2);
  EXPECT_EQ(finalizeAvg<std::int8_t>(-128, 3), -42);
  // A world size beyond the range of the element type must not wrap the divisor.
  EXPECT_EQ(finalizeAvg<std::int8_t>(-128, 200), 0);
  EXPECT_EQ(finalizeAvg<std::int8_t>(-128, 100), -1);
  EXPECT_EQ(finalizeAvg<std::uint8_t>(255, 256), 0);
  EXPECT_EQ(finalizeAvg<std::uint8_t>(255, 2), 127);
  EXPECT_EQ(finalizeAvg<std::uint64_t>(~std::uint64_t{0}, 3), 0x5555555555555555u);
}

TEST(ReduceOps, IntegerAvgOfAWrappedSumDividesTheWrappedValue) {
  // int8: 100 + 100 wraps to -56; avg over 2 ranks is -28, not 100 (types.h documents this).
  const std::int8_t a[] = {100, -100, -7};
  const std::int8_t b[] = {100, -100, 0};
  const std::int8_t* srcs[] = {a, b};
  std::int8_t out[3];
  const std::vector<std::uint8_t> from_send(2, 1);
  reduceElements<std::int8_t, Avg>(out, srcs, 2, 3, wholeAverage(from_send));
  EXPECT_EQ(out[0], -28);
  EXPECT_EQ(out[1], 28);  // -200 wraps to 56
  EXPECT_EQ(out[2], -3);  // truncation toward zero, not floor (-4)
}

TEST(ReduceOps, IntegerMinMaxCompareInTheirOwnSignedness) {
  EXPECT_EQ(Min::apply<std::int8_t>(-1, 1), -1);
  EXPECT_EQ(Max::apply<std::int8_t>(-1, 1), 1);
  EXPECT_EQ(Min::apply<std::uint8_t>(255, 1), 1);
  EXPECT_EQ(Max::apply<std::uint8_t>(255, 1), 255);
  EXPECT_EQ(Min::apply<std::int64_t>(std::numeric_limits<std::int64_t>::min(), 0),
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(Max::apply<std::uint64_t>(~std::uint64_t{0}, 0), ~std::uint64_t{0});
}

// ---- floating semantics ----

template <typename F>
void checkNanPropagation() {
  const F nan = std::numeric_limits<F>::quiet_NaN();
  const F one = 1;
  const F inf = std::numeric_limits<F>::infinity();
  EXPECT_TRUE(std::isnan(Min::apply(nan, one)));
  EXPECT_TRUE(std::isnan(Min::apply(one, nan)));
  EXPECT_TRUE(std::isnan(Max::apply(nan, one)));
  EXPECT_TRUE(std::isnan(Max::apply(one, nan)));
  EXPECT_TRUE(std::isnan(Min::apply(nan, nan)));
  EXPECT_TRUE(std::isnan(Max::apply(-inf, nan)));
  EXPECT_TRUE(std::isnan(Min::apply(inf, nan)));
  EXPECT_EQ(Min::apply(-inf, one), -inf);
  EXPECT_EQ(Max::apply(one, inf), inf);
}

TEST(ReduceOps, FloatMinMaxPropagateNanInEitherArgumentOrder) {
  checkNanPropagation<float>();
  checkNanPropagation<double>();
}

TEST(ReduceOps, MinMaxOfSignedZerosReturnTheFirstOperand) {
  EXPECT_TRUE(std::signbit(Min::apply(-0.0f, 0.0f)));
  EXPECT_FALSE(std::signbit(Min::apply(0.0f, -0.0f)));
  EXPECT_TRUE(std::signbit(Max::apply(-0.0, 0.0)));
  EXPECT_FALSE(std::signbit(Max::apply(0.0, -0.0)));
}

TEST(ReduceOps, NanInAnySourcePropagatesThroughReduceElementsAndHostReduce) {
  constexpr std::uint16_t kHalfQuietNan = 0x7e00;
  constexpr std::uint16_t kHalfOne = 0x3c00;
  constexpr std::uint16_t kHalfTwo = 0x4000;
  for (int nan_rank = 0; nan_rank < 3; ++nan_rank) {
    Half inputs[3] = {{kHalfOne}, {kHalfTwo}, {kHalfOne}};
    inputs[nan_rank] = Half{kHalfQuietNan};
    const Half* srcs[] = {&inputs[0], &inputs[1], &inputs[2]};
    Half out_min{0};
    Half out_max{0};
    reduceElements<Half, Min>(&out_min, srcs, 3, 1);
    reduceElements<Half, Max>(&out_max, srcs, 3, 1);
    EXPECT_TRUE(std::isnan(halfToFloat(out_min))) << "NaN at rank " << nan_rank;
    EXPECT_TRUE(std::isnan(halfToFloat(out_max))) << "NaN at rank " << nan_rank;
    const void* untyped[] = {&inputs[0], &inputs[1], &inputs[2]};
    Half host_out{0};
    hostReduce(DataType::kFloat16, ReduceOp::kMin, &host_out, untyped, 3, 1, false, 3);
    EXPECT_TRUE(std::isnan(halfToFloat(host_out))) << "NaN at rank " << nan_rank;
    hostReduce(DataType::kFloat16, ReduceOp::kMax, &host_out, untyped, 3, 1, false, 3);
    EXPECT_TRUE(std::isnan(halfToFloat(host_out))) << "NaN at rank " << nan_rank;
  }
}

TEST(ReduceOps, HalfAccumulatesInFloatAndRoundsOnceWhenStored) {
  // 2048 + 1 + 1 in fp16 arithmetic would be 2048 twice over (2049 is a tie, to even); accumulated in
  // fp32 it is 2050, which fp16 represents exactly.
  const Half a[] = {floatToHalf(2048.0f)};
  const Half b[] = {floatToHalf(1.0f)};
  const Half* srcs[] = {a, b, b};
  Half out{0};
  reduceElements<Half, Sum>(&out, srcs, 3, 1);
  EXPECT_EQ(halfToFloat(out), 2050.0f);
}

// ---- avg: NCCL's premultiplied sum for floating types ----

template <typename T>
T fromBits(std::uint64_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

template <typename T>
std::uint64_t bitsOf(T value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

TEST(ReduceOps, AvgReciprocalIsNcclsPremultiplier) {
  // 1/3 in double, to fp32 (0x3EAAAAAB, just above 1/3), then to the element type.
  EXPECT_EQ(bitsOf(avgReciprocal<float>(3)), 0x3EAAAAABu);
  EXPECT_EQ(bitsOf(avgReciprocal<float>(10)), 0x3DCCCCCDu);
  EXPECT_EQ(bitsOf(avgReciprocal<double>(3)), 0x3FD5555555555555u);
  EXPECT_EQ(storeElement<Half>(avgReciprocal<Half>(3)).bits, 0x3555);          // 0.333251953125
  EXPECT_EQ(storeElement<BFloat16>(avgReciprocal<BFloat16>(3)).bits, 0x3EAB);  // fp32 0x3EAAAAAB rounded up
  EXPECT_EQ(avgReciprocal<float>(1), 1.0f);
  EXPECT_EQ(avgReciprocal<float>(64), 0.015625f);  // powers of two are exact
}

// Every dtype's largest finite value averaged over two ranks: MAX (each term MAX/2, exact), where summing
// first overflows.
template <typename T>
void checkTwoMaxesAverageToMax(std::uint64_t max_bits) {
  const T max = fromBits<T>(max_bits);
  const T a[] = {max};
  const T b[] = {max};
  const T* srcs[] = {a, b};
  const std::vector<std::uint8_t> from_send(2, 1);
  T out = fromBits<T>(0);
  reduceElements<T, Avg>(&out, srcs, 2, 1, wholeAverage(from_send));
  EXPECT_EQ(bitsOf(out), max_bits) << "reduceElements";
  const void* untyped[] = {a, b};
  T host_out = fromBits<T>(0);
  hostReduce(std::is_same_v<T, Half>         ? DataType::kFloat16
             : std::is_same_v<T, BFloat16>   ? DataType::kBFloat16
             : std::is_same_v<T, Float8E4M3> ? DataType::kFloat8E4M3
             : std::is_same_v<T, Float8E5M2> ? DataType::kFloat8E5M2
             : std::is_same_v<T, float>      ? DataType::kFloat32
                                             : DataType::kFloat64,
             ReduceOp::kAvg, &host_out, untyped, 2, 1, true, 2, from_send.data());
  EXPECT_EQ(bitsOf(host_out), max_bits) << "hostReduce";
}

TEST(ReduceOps, FloatAvgOfTwoMaxesIsMaxNotInfinity) {
  checkTwoMaxesAverageToMax<float>(0x7F7FFFFFu);
  checkTwoMaxesAverageToMax<double>(0x7FEFFFFFFFFFFFFFu);
  checkTwoMaxesAverageToMax<Half>(0x7BFFu);
  checkTwoMaxesAverageToMax<BFloat16>(0x7F7Fu);
  checkTwoMaxesAverageToMax<Float8E4M3>(0x7Eu);
  checkTwoMaxesAverageToMax<Float8E5M2>(0x7Bu);
}

TEST(ReduceOps, Fp16PremultipliedTermIsRoundedToHalfBeforeTheSum) {
  // (1 + 2^-10) x 0x3555 = 0.3335773... rounds to 0x3556 (0.33349609375); three of those sum in fp32 to
  // 1 + 2^-11, a tie that rounds to even, 1.0 (0x3C00). Summing first, 3.0029296875 / 3 is 1 + 2^-10
  // (0x3C01): the two definitions differ in the last bit.
  EXPECT_EQ(premultiplied<Half>(Half{0x3C01}, avgReciprocal<Half>(3)).bits, 0x3556);
  const Half x[] = {{0x3C01}};
  const Half* srcs[] = {x, x, x};
  const std::vector<std::uint8_t> from_send(3, 1);
  Half out{0};
  reduceElements<Half, Avg>(&out, srcs, 3, 1, wholeAverage(from_send));
  EXPECT_EQ(out.bits, 0x3C00);
  const void* untyped[] = {x, x, x};
  Half host_out{0};
  hostReduce(DataType::kFloat16, ReduceOp::kAvg, &host_out, untyped, 3, 1, true, 3, from_send.data());
  EXPECT_EQ(host_out.bits, 0x3C00);
}

TEST(ReduceOps, Fp32AvgSumsTheRoundedTerms) {
  // {1, 2, 2} over 3 ranks: r = 0x3EAAAAAB; the terms r and 2r (exact) sum, in rank order, to 0x3FD55556
  // (1.66666675), one ulp above 5/3 rounded (0x3FD55555), which dividing the sum would give.
  const float a[] = {1.0f};
  const float b[] = {2.0f};
  const float* srcs[] = {a, b, b};
  const std::vector<std::uint8_t> from_send(3, 1);
  float out = 0;
  reduceElements<float, Avg>(&out, srcs, 3, 1, wholeAverage(from_send));
  EXPECT_EQ(bitsOf(out), 0x3FD55556u);
  EXPECT_EQ(bitsOf(5.0f / 3.0f), 0x3FD55555u);
}

TEST(ReduceOps, OnlySendBufferSourcesArePremultipliedAndFloatsAreNeverDivided) {
  // A ring's step: its predecessor's partial (already the sum of premultiplied terms) plus its own input.
  const float partial[] = {3.0f};
  const float input[] = {4.0f};
  const float* srcs[] = {partial, input};
  const std::uint8_t from_send[] = {0, 1};
  float out = 0;
  reduceElements<float, Avg>(&out, srcs, 2, 1, AvgStep{true, 4, true, from_send});
  EXPECT_EQ(out, 3.0f + 1.0f);  // 4 x 0.25, and the final reduction divides nothing
  const void* untyped[] = {partial, input};
  hostReduce(DataType::kFloat32, ReduceOp::kAvg, &out, untyped, 2, 1, true, 4, from_send);
  EXPECT_EQ(out, 4.0f);
  // A copy out of the send buffer is a one-source reduction: the published term.
  const void* copy_source[] = {input};
  hostReduce(DataType::kFloat32, ReduceOp::kAvg, &out, copy_source, 1, 1, false, 4, &from_send[1]);
  EXPECT_EQ(out, 1.0f);
  // The other ops ignore avg's marks.
  hostReduce(DataType::kFloat32, ReduceOp::kSum, &out, untyped, 2, 1, true, 4, from_send);
  EXPECT_EQ(out, 7.0f);
}

TEST(ReduceOps, IntegerAvgIgnoresTheMarksAndDividesOnlyWhenFinal) {
  const std::int32_t a[] = {7};
  const std::int32_t b[] = {10};
  const void* srcs[] = {a, b};
  const std::uint8_t from_send[] = {1, 1};
  std::int32_t out = 0;
  hostReduce(DataType::kInt32, ReduceOp::kAvg, &out, srcs, 2, 1, true, 2, from_send);
  EXPECT_EQ(out, 8);  // 17 / 2, truncated
  hostReduce(DataType::kInt32, ReduceOp::kAvg, &out, srcs, 2, 1, false, 2, from_send);
  EXPECT_EQ(out, 17);  // a partial: the sum
}

// ---- fold order ----

// (1 + 2^-24) + 2^-24 rounds to 1 twice (each a tie, to even), while (2^-24 + 2^-24) + 1 = 1 + 2^-23 is
// exact: the same three inputs give different bits in different orders, so the order must be the one given.
TEST(ReduceOps, SourcesAreFoldedLeftToRightInTheGivenOrder) {
  const float one[] = {1.0f};
  const float tiny[] = {std::ldexp(1.0f, -24)};
  const float* forward[] = {one, tiny, tiny};
  const float* backward[] = {tiny, tiny, one};
  float out{0};
  reduceElements<float, Sum>(&out, forward, 3, 1);
  EXPECT_EQ(out, 1.0f);
  reduceElements<float, Sum>(&out, backward, 3, 1);
  EXPECT_EQ(out, 1.0f + std::ldexp(1.0f, -23));

  const void* host_forward[] = {one, tiny, tiny};
  const void* host_backward[] = {tiny, tiny, one};
  hostReduce(DataType::kFloat32, ReduceOp::kSum, &out, host_forward, 3, 1, false, 3);
  EXPECT_EQ(out, 1.0f);
  hostReduce(DataType::kFloat32, ReduceOp::kSum, &out, host_backward, 3, 1, false, 3);
  EXPECT_EQ(out, 1.0f + std::ldexp(1.0f, -23));

  const double one_d[] = {1.0};
  const double tiny_d[] = {std::ldexp(1.0, -53)};
  const void* forward_d[] = {one_d, tiny_d, tiny_d};
  const void* backward_d[] = {tiny_d, tiny_d, one_d};
  double out_d{0};
  hostReduce(DataType::kFloat64, ReduceOp::kSum, &out_d, forward_d, 3, 1, false, 3);
  EXPECT_EQ(out_d, 1.0);
  hostReduce(DataType::kFloat64, ReduceOp::kSum, &out_d, backward_d, 3, 1, false, 3);
  EXPECT_EQ(out_d, 1.0 + std::ldexp(1.0, -52));
}

// ---- against the independent reference ----

struct Case {
  DataType dtype;
  ReduceOp op;
  int nsrc;
  std::size_t count;
  std::uint64_t seed;
};

// Runs reduceElements and hostReduce on one case; "" when both match the reference and each other.
std::string runCase(const Case& c) {
  Buffers inputs(c.dtype, c.nsrc, c.count);
  for (int r = 0; r < c.nsrc; ++r) fillPayload(c.dtype, c.op, c.seed, r, inputs.rank(r), c.count);
  const std::vector<const void*> srcs = inputs.pointers();
  const std::vector<std::uint8_t> from_send(static_cast<std::size_t>(c.nsrc), 1);
  std::vector<std::uint64_t> device_style = inputs.newOutput();
  std::vector<std::uint64_t> host_style = inputs.newOutput();
  reduceElementsDynamic(c.dtype, c.op, device_style.data(), srcs, c.count, wholeAverage(from_send));
  hostReduce(c.dtype, c.op, host_style.data(), srcs.data(), c.nsrc, c.count, true, c.nsrc, from_send.data());
  const auto ref = referenceReduce(c.dtype, c.op, srcs, c.count);
  std::string error = compareToReference(c.dtype, c.op, ref, device_style.data(), c.count);
  if (!error.empty()) return "reduceElements: " + error;
  if (!sameBytes(device_style.data(), host_style.data(), inputs.bytes(c.count))) {
    return "hostReduce differs from reduceElements bit for bit";
  }
  return "";
}

// Upper limits of the random cases (exclusive): up to 64 sources, up to 300 elements.
constexpr int kMaxSourcesExclusive = 65;
constexpr std::size_t kMaxCountExclusive = 301;

RC_GTEST_PROP(ReduceOps, RandomCasesMatchTheIndependentReference, ()) {
  Case c;
  c.dtype = static_cast<DataType>(*uniformValueIn(0, kDataTypeCount));
  c.op = static_cast<ReduceOp>(*uniformValueIn(0, kReduceOpCount));
  c.nsrc = *rc::gen::inRange(1, kMaxSourcesExclusive);
  c.count = *rc::gen::inRange<std::size_t>(0, kMaxCountExclusive);
  c.seed = *rc::gen::resize(rc::kNominalSize, rc::gen::arbitrary<std::uint64_t>());
  const std::string error = runCase(c);
  RC_ASSERT(error == "");
}

// Every dtype x op at the extremes of the ranges, so no combination is left to chance.
TEST(ReduceOps, EveryDtypeAndOpMatchesTheReference) {
  constexpr std::uint64_t kSeed = 0x5eed;
  constexpr int kNsrcs[] = {1, 2, 7, 64};
  constexpr std::size_t kCounts[] = {0, 1, 257};
  for (int d = 0; d < kDataTypeCount; ++d) {
    for (int o = 0; o < kReduceOpCount; ++o) {
      for (const int nsrc : kNsrcs) {
        for (const std::size_t count : kCounts) {
          const Case c{static_cast<DataType>(d), static_cast<ReduceOp>(o), nsrc, count, kSeed};
          EXPECT_EQ(runCase(c), "") << "dtype " << d << " op " << o << " nsrc " << nsrc << " count " << count;
        }
      }
    }
  }
}

// Partial avg reductions (a ring's or a tree's steps: some sources send buffers, some partials, final or
// not, any world size): hostReduce's staged blocks give reduceElements's bits.
RC_GTEST_PROP(ReduceOps, HostReduceEqualsReduceElementsForAnyAvgStep, ()) {
  const auto dtype = static_cast<DataType>(*uniformValueIn(0, kDataTypeCount));
  const int nsrc = *rc::gen::inRange(1, kMaxSourcesExclusive);
  const std::size_t count = *rc::gen::inRange<std::size_t>(0, kMaxCountExclusive);
  const int world_size = *uniformValueIn(1, kMaxWorldSize + 1);
  const bool finalize = *rc::gen::arbitrary<bool>();
  const std::uint64_t seed = *rc::gen::resize(rc::kNominalSize, rc::gen::arbitrary<std::uint64_t>());
  std::vector<std::uint8_t> from_send;
  for (int k = 0; k < nsrc; ++k) from_send.push_back(*rc::gen::arbitrary<bool>() ? 1 : 0);
  Buffers inputs(dtype, nsrc, count);
  for (int r = 0; r < nsrc; ++r) fillPayload(dtype, ReduceOp::kAvg, seed, r, inputs.rank(r), count);
  const std::vector<const void*> srcs = inputs.pointers();
  std::vector<std::uint64_t> element_wise = inputs.newOutput();
  std::vector<std::uint64_t> blocked = inputs.newOutput();
  reduceElementsDynamic(dtype, ReduceOp::kAvg, element_wise.data(), srcs, count,
                        AvgStep{true, world_size, finalize, from_send.data()});
  hostReduce(dtype, ReduceOp::kAvg, blocked.data(), srcs.data(), nsrc, count, finalize, world_size, from_send.data());
  RC_ASSERT(sameBytes(element_wise.data(), blocked.data(), inputs.bytes(count)));
}

// ---- aliasing ----

TEST(ReduceOps, InPlaceIntoFirstOrLastSourceGivesTheSameBits) {
  constexpr int kSources = 5;
  // More than one hostReduce block (256 elements), and not a multiple of it.
  constexpr std::size_t kCount = 700;
  constexpr std::uint64_t kSeed = 42;
  for (int d = 0; d < kDataTypeCount; ++d) {
    for (int o = 0; o < kReduceOpCount; ++o) {
      const auto dtype = static_cast<DataType>(d);
      const auto op = static_cast<ReduceOp>(o);
      const std::vector<std::uint8_t> from_send(kSources, 1);
      Buffers pristine(dtype, kSources, kCount);
      for (int r = 0; r < kSources; ++r) fillPayload(dtype, op, kSeed, r, pristine.rank(r), kCount);
      std::vector<std::uint64_t> separate = pristine.newOutput();
      reduceElementsDynamic(dtype, op, separate.data(), pristine.pointers(), kCount, wholeAverage(from_send));
      for (const int alias : {0, kSources - 1}) {
        for (const bool use_host : {false, true}) {
          Buffers work = pristine;
          if (use_host) {
            const auto srcs = work.pointers();
            hostReduce(dtype, op, work.rank(alias), srcs.data(), kSources, kCount, true, kSources, from_send.data());
          } else {
            reduceElementsDynamic(dtype, op, work.rank(alias), work.pointers(), kCount, wholeAverage(from_send));
          }
          EXPECT_TRUE(sameBytes(work.rank(alias), separate.data(), work.bytes(kCount)))
              << "dtype " << d << " op " << o << " dst == srcs[" << alias << "] via "
              << (use_host ? "hostReduce" : "reduceElements");
        }
      }
    }
  }
}

}  // namespace
}  // namespace peerreduce::kernels
