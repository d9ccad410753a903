// Element types, reduction operators and algorithm names of peerreduce, with their text forms.
//
// Semantics of the reductions (the same on every transport, bit for bit):
// - Integers wrap as their C type does (two's complement, modulo 2^bits) for sum and prod.
// - avg on integers is the wrapped sum divided by the world size, truncated toward zero (C division).
//   It is NOT the mathematically exact mean when the sum wraps; use a wider type if that matters.
// - avg on floating point is NCCL's: a premultiplied sum, not a sum divided at the end. Every element read
//   from a send buffer (any rank's) is first multiplied by r, the reciprocal of the world size n as NCCL
//   holds it (1/n in double, rounded to fp32, then to the element type; fp64 keeps the double), the product
//   rounded once to the element type (round to nearest even); those terms are then summed like sum's
//   (in rank order where the plan says so), and that sum is the result. So the average of values that
//   are each finite stays finite where their sum would overflow: [MAX, MAX] over 2 ranks is MAX, not inf,
//   and an average whose inputs all lie within MAX/2 in magnitude is finite on every algorithm (the terms
//   are at most MAX/2n each, their n-1 rounded additions add at most 33% for bf16 at 64 ranks). Inputs
//   nearer MAX can still round past it when n is not a power of two, as in NCCL, differently per
//   algorithm (a ring rounds its partial sums to the element type, a one-shot's fp16 sum runs in fp32).
//   The product of two fp16 or bf16 values is exact in fp32 (bf16's above fp32's subnormal range), so
//   the term is the correctly rounded product NCCL computes.
// - fp16 and bf16 accumulate in fp32 within each reduction step and round to nearest even when stored.
// - fp8 (OCP FP8: e4m3, NCCL's ncclFloat8e4m3, and e5m2, ncclFloat8e5m2) accumulates in fp8, as NCCL does:
//   every pairwise step (the sum, product, min or max of two values, and avg's premultiplication) converts
//   both operands to fp32, computes there and rounds the result to nearest even back to fp8, so each step
//   is the exact result rounded once and a fold of k values rounds k-1 times, in the plan's order.
//   Overflow: e4m3 (no infinity) saturates to +-448, as CUDA's __NV_SATFINITE conversion; e5m2 follows IEEE
//   754 and becomes +-infinity past 57344 (NCCL's kernels saturate e5m2 too, at 57344). NaN stays NaN with
//   its sign (e4m3 has one NaN per sign, S.1111.111; e5m2's comes back quiet). kernels/float8.h has the
//   conversions.
// - min and max on floating point propagate NaN: if any input is NaN, the result is NaN.
//
// Thread safety: everything here is a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string_view>

#include "peerreduce/status.h"

namespace peerreduce {

// Largest world peerreduce supports: rank sets are 64-bit masks in the verifier and on the GPU.
inline constexpr int kMaxWorldSize = 64;

// Records ranks exchange (symmetric memory, exported buffers) are at most this long, so a bootstrap can
// gather fixed-size blocks.
inline constexpr std::size_t kMaxPeerRecordBytes = 512;

// Values are stable: the C API's prDataType_t uses the same numbers.
enum class DataType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kBFloat16 = 7,
  kFloat32 = 8,
  kFloat64 = 9,
  kFloat8E4M3 = 10,  // OCP FP8 e4m3fn: bias 7, max 448, no infinities (NCCL's ncclFloat8e4m3)
  kFloat8E5M2 = 11,  // OCP FP8 e5m2: bias 15, max 57344, IEEE infinities and NaNs (NCCL's ncclFloat8e5m2)
};
inline constexpr int kDataTypeCount = 12;

// Values are stable: the C API's prRedOp_t uses the same numbers.
enum class ReduceOp : int {
  kSum = 0,
  kProd = 1,
  kMin = 2,
  kMax = 3,
  kAvg = 4,
};
inline constexpr int kReduceOpCount = 5;

// Values are stable: the C API's prAlgorithm_t uses the same numbers.
enum class Algorithm : int {
  kAuto = 0,
  kOneShot = 1,
  kTwoShot = 2,
  kRing = 3,
  kRecursiveDoubling = 4,
  kRabenseifner = 5,
  kTree = 6,  // reduce up a spanning tree of the links and broadcast down: relays for partial connectivity
  // Two-shot whose scatter and gather are copy-engine copies, pipelined over stages; chosen only when
  // forced (PEERREDUCE_ALGO) until measured (lib/algorithms/copy_engine_two_shot.cc).
  kCopyEngineTwoShot = 7,
  // A plan a user wrote in the plan text format (docs/PLANS.md), never built here: it runs where
  // PEERREDUCE_PLAN_FILE's size range or a tuning-table entry names it, never by the cost model's choice.
  kUser = 8,
};
inline constexpr int kAlgorithmCount = 9;
// kAuto and the algorithms buildPlan builds (every value below this one); kUser is not one of them.
inline constexpr int kBuiltAlgorithmCount = 8;

// The collective operations a communicator runs (NCCL's buffer semantics, peerreduce/communicator.h).
// A plan is written for one of them (Plan::collective).
enum class Collective : int {
  kAllReduce = 0,
  kReduceScatter = 1,
  kAllGather = 2,
  kBroadcast = 3,
};
inline constexpr int kCollectiveCount = 4;

// One buffer of a batched allreduce (Communicator::allreduceBatch): `count` elements from `send` into
// `recv` (the same pointer for in place), reduced across ranks like a separate allreduce.
struct BatchItem {
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
};

bool isValidDataType(DataType dtype);
bool isValidReduceOp(ReduceOp op);
bool isValidAlgorithm(Algorithm algorithm);
bool isValidCollective(Collective collective);

// Bytes per element; 0 for an invalid dtype.
std::size_t dataTypeSize(DataType dtype);
bool isFloatingPoint(DataType dtype);

// Canonical names: "int8", "uint8", "int32", "uint32", "int64", "uint64", "fp16", "bf16", "fp32", "fp64",
// "fp8e4m3", "fp8e5m2";
// "sum", "prod", "min", "max", "avg"; "auto", "one-shot", "two-shot", "ring", "recursive-doubling",
// "rabenseifner", "tree", "copy-engine-two-shot", "user". Invalid values give "invalid".
std::string_view dataTypeName(DataType dtype);
std::string_view reduceOpName(ReduceOp op);
std::string_view algorithmName(Algorithm algorithm);
// "allreduce", "reduce-scatter", "all-gather", "broadcast"; "invalid" otherwise.
std::string_view collectiveName(Collective collective);

// Parses a canonical name (also accepts common aliases such as "float32", "half", "bfloat16", "double",
// "float8_e4m3fn", "float8_e5m2").
// An unknown name is an kInvalidArgument error that lists the accepted names.
StatusOr<DataType> parseDataType(std::string_view text);
StatusOr<ReduceOp> parseReduceOp(std::string_view text);
StatusOr<Algorithm> parseAlgorithm(std::string_view text);
StatusOr<Collective> parseCollective(std::string_view text);

// Test frameworks (GoogleTest) print parameters with these.
std::ostream& operator<<(std::ostream& out, DataType dtype);
std::ostream& operator<<(std::ostream& out, ReduceOp op);
std::ostream& operator<<(std::ostream& out, Algorithm algorithm);
std::ostream& operator<<(std::ostream& out, Collective collective);

}  // namespace peerreduce
