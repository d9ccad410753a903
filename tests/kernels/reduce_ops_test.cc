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
void reduceElementsFor(ReduceOp op, void* dst, const std::vector<const void*>& srcs, std::size_t count, bool finalize,
                       int world_size) {
  std::vector<const T*> typed;
  for (const void* src : srcs) typed.push_back(static_cast<const T*>(src));
  T* out = static_cast<T*>(dst);
  const int nsrc = static_cast<int>(srcs.size());
  switch (op) {
    case ReduceOp::kSum:
      return reduceElements<T, Sum>(out, typed.data(), nsrc, count, false, world_size);
    case ReduceOp::kProd:
      return reduceElements<T, Prod>(out, typed.data(), nsrc, count, false, world_size);
    case ReduceOp::kMin:
      return reduceElements<T, Min>(out, typed.data(), nsrc, count, false, world_size);
    case ReduceOp::kMax:
      return reduceElements<T, Max>(out, typed.data(), nsrc, count, false, world_size);
    case ReduceOp::kAvg:
      return reduceElements<T, Avg>(out, typed.data(), nsrc, count, finalize, world_size);
  }
}

void reduceElementsDynamic(DataType dtype, ReduceOp op, void* dst, const std::vector<const void*>& srcs,
                           std::size_t count, bool finalize, int world_size) {
  withElementType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduceElementsFor<T>(op, dst, srcs, count, finalize, world_size);
  });
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
rc::Gen<T> uniformIn(T low, T high_exclusive) {
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
  const auto a = *uniformIn(std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max());
  const auto b = *rc::gen::arbitrary<std::int32_t>();  // size-scaled: small values, where signs mix
  checkWrappingAgainstUint64(a, b);
}
RC_GTEST_PROP(ReduceOps, Int64WrapsLikeUnsignedArithmetic, ()) {
  const auto a = *uniformIn(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
  const auto b = *uniformIn(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
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
  reduceElements<std::int8_t, Avg>(out, srcs, 2, 3, true, 2);
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
    reduceElements<Half, Min>(&out_min, srcs, 3, 1, false, 3);
    reduceElements<Half, Max>(&out_max, srcs, 3, 1, false, 3);
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
  reduceElements<Half, Sum>(&out, srcs, 3, 1, false, 3);
  EXPECT_EQ(halfToFloat(out), 2050.0f);
}

TEST(ReduceOps, FloatAvgDividesOnceInTheAccumulator) {
  const float a[] = {1.0f, 3.0f};
  const float b[] = {2.0f, -3.0f};
  const float c[] = {4.0f, 1.0f};
  const float* srcs[] = {a, b, c};
  float out[2];
  reduceElements<float, Avg>(out, srcs, 3, 2, true, 3);
  EXPECT_EQ(out[0], 7.0f / 3.0f);
  EXPECT_EQ(out[1], 1.0f / 3.0f);
  reduceElements<float, Avg>(out, srcs, 3, 2, false, 3);  // not finalized: the sum
  EXPECT_EQ(out[0], 7.0f);
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
  reduceElements<float, Sum>(&out, forward, 3, 1, false, 3);
  EXPECT_EQ(out, 1.0f);
  reduceElements<float, Sum>(&out, backward, 3, 1, false, 3);
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
  const bool finalize = c.op == ReduceOp::kAvg;
  std::vector<std::uint64_t> device_style = inputs.newOutput();
  std::vector<std::uint64_t> host_style = inputs.newOutput();
  reduceElementsDynamic(c.dtype, c.op, device_style.data(), srcs, c.count, finalize, c.nsrc);
  hostReduce(c.dtype, c.op, host_style.data(), srcs.data(), c.nsrc, c.count, finalize, c.nsrc);
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
  c.dtype = static_cast<DataType>(*uniformIn(0, kDataTypeCount));
  c.op = static_cast<ReduceOp>(*uniformIn(0, kReduceOpCount));
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
      const bool finalize = op == ReduceOp::kAvg;
      Buffers pristine(dtype, kSources, kCount);
      for (int r = 0; r < kSources; ++r) fillPayload(dtype, op, kSeed, r, pristine.rank(r), kCount);
      std::vector<std::uint64_t> separate = pristine.newOutput();
      reduceElementsDynamic(dtype, op, separate.data(), pristine.pointers(), kCount, finalize, kSources);
      for (const int alias : {0, kSources - 1}) {
        for (const bool use_host : {false, true}) {
          Buffers work = pristine;
          if (use_host) {
            const auto srcs = work.pointers();
            hostReduce(dtype, op, work.rank(alias), srcs.data(), kSources, kCount, finalize, kSources);
          } else {
            reduceElementsDynamic(dtype, op, work.rank(alias), work.pointers(), kCount, finalize, kSources);
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
