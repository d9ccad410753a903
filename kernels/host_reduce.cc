// hostReduce: run-time dispatch onto reduce_ops.h for host code (the simulator, host fallbacks).
//
// Why blocks: reduceElements folds all sources of one element before moving to the next, which is the
// right shape for a GPU thread but strides across k buffers per element on a CPU. Here each block of
// kBlockElements is staged into aligned locals and the sources are folded one whole block at a time:
// the inner loops run over contiguous elements (vectorisable) and every element still sees exactly the
// same sequence of operations as in reduceElements, so the bits are identical. Staging through memcpy
// also makes unaligned user pointers legal, and reading every source of a block before writing the
// block to dst makes dst == srcs[k] safe. A premultiplied source (a floating avg reading a send buffer) is
// scaled as it is staged, element by element exactly as AvgArithmetic::term does.
#include "host_reduce.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dispatch.h"
#include "float16.h"
#include "reduce_ops.h"

namespace peerreduce::kernels {
namespace {

// Elements per block: two arrays of at most 8-byte elements make 4 KiB of stack, well inside L1, and
// long enough for the vector loops to amortise their setup.
constexpr std::size_t kBlockElements = 256;

[[noreturn]] void dieOnPrecondition(const char* what, int value) {
  std::fprintf(stderr, "peerreduce: hostReduce precondition violated: %s (got %d); this is a bug in the caller\n", what,
               value);
  std::abort();
}

template <typename T, typename Op>
void reduceBlocked(void* dst, const void* const* srcs, int nsrc, std::size_t count, const AvgStep& avg) {
  using Acc = AccumulatorT<T>;
  const AvgArithmetic<T> arithmetic(avg);
  auto* dst_bytes = static_cast<unsigned char*>(dst);
  T staged[kBlockElements];
  Acc acc[kBlockElements];
  // Source k of the block, staged; premultiplied in place when avg reads it from a send buffer.
  const auto stage = [&](int k, std::size_t offset_bytes, std::size_t n) {
    std::memcpy(staged, static_cast<const unsigned char*>(srcs[k]) + offset_bytes, n * sizeof(T));
    if (arithmetic.premultiplies(k)) {
      for (std::size_t j = 0; j < n; ++j) staged[j] = arithmetic.scaled(staged[j]);
    }
  };
  for (std::size_t begin = 0; begin < count; begin += kBlockElements) {
    const std::size_t n = std::min(kBlockElements, count - begin);
    const std::size_t offset_bytes = begin * sizeof(T);
    stage(0, offset_bytes, n);
    for (std::size_t j = 0; j < n; ++j) acc[j] = loadElement<T>(staged[j]);
    for (int k = 1; k < nsrc; ++k) {
      stage(k, offset_bytes, n);
      for (std::size_t j = 0; j < n; ++j) acc[j] = Op::apply(acc[j], loadElement<T>(staged[j]));
    }
    for (std::size_t j = 0; j < n; ++j) staged[j] = arithmetic.result(acc[j]);
    std::memcpy(dst_bytes + offset_bytes, staged, n * sizeof(T));
  }
}

}  // namespace

void hostReduce(DataType dtype, ReduceOp op, void* dst, const void* const* srcs, int nsrc, std::size_t count,
                bool finalize, int world_size, const std::uint8_t* from_send) {
  if (nsrc < 1) dieOnPrecondition("nsrc >= 1", nsrc);
  const bool avg = op == ReduceOp::kAvg;
  if (avg && world_size < 1) dieOnPrecondition("world_size >= 1 for avg", world_size);
  const auto known = [](auto) { return true; };
  if (!visitDataType(static_cast<int>(dtype), false, known))
    dieOnPrecondition("a valid DataType", static_cast<int>(dtype));
  if (!visitReduceOp(static_cast<int>(op), false, known)) dieOnPrecondition("a valid ReduceOp", static_cast<int>(op));
  const AvgStep step{avg, avg ? world_size : 1, finalize, from_send};
  visitDataTypeAndOp(static_cast<int>(dtype), static_cast<int>(op), false, [&](auto type, auto reduce) {
    reduceBlocked<typename decltype(type)::type, typename decltype(reduce)::type>(dst, srcs, nsrc, count, step);
    return true;
  });
}

}  // namespace peerreduce::kernels
