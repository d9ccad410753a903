// hostReduce: run-time dispatch onto reduce_ops.h for host code (the simulator, host fallbacks).
//
// Why blocks: reduceElements folds all sources of one element before moving to the next, which is the
// right shape for a GPU thread but strides across k buffers per element on a CPU. Here each block of
// kBlockElements is staged into aligned locals and the sources are folded one whole block at a time:
// the inner loops run over contiguous elements (vectorisable) and every element still sees exactly the
// same sequence of operations as in reduceElements, so the bits are identical. Staging through memcpy
// also makes unaligned user pointers legal, and reading every source of a block before writing the
// block to dst makes dst == srcs[k] safe.
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
void reduceBlocked(void* dst, const void* const* srcs, int nsrc, std::size_t count, bool finalize_avg, int world_size) {
  using Acc = AccumulatorT<T>;
  auto* dst_bytes = static_cast<unsigned char*>(dst);
  T staged[kBlockElements];
  Acc acc[kBlockElements];
  for (std::size_t begin = 0; begin < count; begin += kBlockElements) {
    const std::size_t n = std::min(kBlockElements, count - begin);
    const std::size_t offset_bytes = begin * sizeof(T);
    const std::size_t block_bytes = n * sizeof(T);
    std::memcpy(staged, static_cast<const unsigned char*>(srcs[0]) + offset_bytes, block_bytes);
    for (std::size_t j = 0; j < n; ++j) acc[j] = loadElement<T>(staged[j]);
    for (int k = 1; k < nsrc; ++k) {
      std::memcpy(staged, static_cast<const unsigned char*>(srcs[k]) + offset_bytes, block_bytes);
      for (std::size_t j = 0; j < n; ++j) acc[j] = Op::apply(acc[j], loadElement<T>(staged[j]));
    }
    if (finalize_avg) {
      for (std::size_t j = 0; j < n; ++j) acc[j] = finalizeAvg<T>(acc[j], world_size);
    }
    for (std::size_t j = 0; j < n; ++j) staged[j] = storeElement<T>(acc[j]);
    std::memcpy(dst_bytes + offset_bytes, staged, block_bytes);
  }
}

}  // namespace

void hostReduce(DataType dtype, ReduceOp op, void* dst, const void* const* srcs, int nsrc, std::size_t count,
                bool finalize, int world_size) {
  if (nsrc < 1) dieOnPrecondition("nsrc >= 1", nsrc);
  const bool finalize_avg = op == ReduceOp::kAvg && finalize;
  if (finalize_avg && world_size < 1) dieOnPrecondition("world_size >= 1 for a finalized avg", world_size);
  const auto known = [](auto) { return true; };
  if (!visitDataType(static_cast<int>(dtype), false, known))
    dieOnPrecondition("a valid DataType", static_cast<int>(dtype));
  if (!visitReduceOp(static_cast<int>(op), false, known)) dieOnPrecondition("a valid ReduceOp", static_cast<int>(op));
  visitDataTypeAndOp(static_cast<int>(dtype), static_cast<int>(op), false, [&](auto type, auto reduce) {
    reduceBlocked<typename decltype(type)::type, typename decltype(reduce)::type>(dst, srcs, nsrc, count, finalize_avg,
                                                                                  world_size);
    return true;
  });
}

}  // namespace peerreduce::kernels
