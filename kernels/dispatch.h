// The one dtype x op dispatch: from the values of DataType and ReduceOp (peerreduce/types.h) to the
// element type and the reduce functor, shared by the host reduce (host_reduce.cc) and every kernel
// launch (plan_interpreter.cu, fused_kernels.cu, line_kernels.cu). Each caller says what an unknown
// value gives (a typed launch error on the device path, a precondition failure on the host); no value
// falls through to a default type or op.
#pragma once

#include <cstdint>

#include "float16.h"
#include "float8.h"
#include "peerreduce/types.h"
#include "reduce_ops.h"

namespace peerreduce::kernels {

template <typename T>
struct TypeTag {
  using type = T;
};
template <typename Op>
struct OpTag {
  using type = Op;
};

// f(TypeTag<T>{}) for the element type of `dtype`, or `unknown` when `dtype` is no DataType.
template <typename Result, typename F>
Result visitDataType(int dtype, Result unknown, F&& f) {
  switch (static_cast<DataType>(dtype)) {
    case DataType::kInt8:
      return f(TypeTag<std::int8_t>{});
    case DataType::kUint8:
      return f(TypeTag<std::uint8_t>{});
    case DataType::kInt32:
      return f(TypeTag<std::int32_t>{});
    case DataType::kUint32:
      return f(TypeTag<std::uint32_t>{});
    case DataType::kInt64:
      return f(TypeTag<std::int64_t>{});
    case DataType::kUint64:
      return f(TypeTag<std::uint64_t>{});
    case DataType::kFloat16:
      return f(TypeTag<Half>{});
    case DataType::kBFloat16:
      return f(TypeTag<BFloat16>{});
    case DataType::kFloat32:
      return f(TypeTag<float>{});
    case DataType::kFloat64:
      return f(TypeTag<double>{});
    case DataType::kFloat8E4M3:
      return f(TypeTag<Float8E4M3>{});
    case DataType::kFloat8E5M2:
      return f(TypeTag<Float8E5M2>{});
  }
  return unknown;
}

// f(OpTag<Op>{}) for the functor of `op` (avg: Avg, which combines as Sum; its division is the finalize
// step's), or `unknown` when `op` is no ReduceOp.
template <typename Result, typename F>
Result visitReduceOp(int op, Result unknown, F&& f) {
  switch (static_cast<ReduceOp>(op)) {
    case ReduceOp::kSum:
      return f(OpTag<Sum>{});
    case ReduceOp::kProd:
      return f(OpTag<Prod>{});
    case ReduceOp::kMin:
      return f(OpTag<Min>{});
    case ReduceOp::kMax:
      return f(OpTag<Max>{});
    case ReduceOp::kAvg:
      return f(OpTag<Avg>{});
  }
  return unknown;
}

// Both at once: f(TypeTag<T>{}, OpTag<Op>{}), or `unknown` when either value is unknown.
template <typename Result, typename F>
Result visitDataTypeAndOp(int dtype, int op, Result unknown, F&& f) {
  return visitDataType(dtype, unknown, [&](auto type) {
    return visitReduceOp(op, unknown, [&](auto reduce) { return f(type, reduce); });
  });
}

// visit(v) for v = 0..count-1, stopping at the first result other than `ok`, which it returns.
template <typename Result, typename Visit>
Result firstOtherThan(Result ok, int count, Visit&& visit) {
  for (int value = 0; value < count; ++value) {
    const Result result = visit(value);
    if (result != ok) return result;
  }
  return ok;
}

// f(TypeTag<T>{}) for every dtype (values 0..kDataTypeCount-1), stopping as firstOtherThan does.
template <typename Result, typename F>
Result forEveryDataType(Result ok, F&& f) {
  return firstOtherThan(ok, kDataTypeCount, [&](int dtype) { return visitDataType(dtype, ok, f); });
}

// f(OpTag<Op>{}) for every op (values 0..kReduceOpCount-1), likewise.
template <typename Result, typename F>
Result forEveryReduceOp(Result ok, F&& f) {
  return firstOtherThan(ok, kReduceOpCount, [&](int op) { return visitReduceOp(op, ok, f); });
}

// f(TypeTag<T>{}, OpTag<Op>{}) for every dtype x op, likewise.
template <typename Result, typename F>
Result forEveryDataTypeAndOp(Result ok, F&& f) {
  return forEveryDataType(ok, [&](auto type) { return forEveryReduceOp(ok, [&](auto op) { return f(type, op); }); });
}

}  // namespace peerreduce::kernels
