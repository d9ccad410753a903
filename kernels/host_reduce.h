// Host entry point to the reduce arithmetic: picks the element type and op at run time.
//
// Contract:
// - Computes, for every i < count, exactly what reduceElements<T, Op> in reduce_ops.h computes: the
//   sources folded left to right in the order given, in the accumulation type, optionally divided by
//   world_size for avg, then stored. The bits are identical to the device kernels' for the same order.
// - dst may be exactly one of the sources (in place); partially overlapping ranges are not allowed.
// - Pointers need no alignment: any byte address works (the data is copied through aligned blocks).
// - Preconditions (the caller validates user input before calling): nsrc >= 1, valid dtype and op,
//   world_size >= 1 when finalizing an avg, count elements readable at each source and writable at dst.
//   A violated nsrc/dtype/op/world_size precondition aborts with a message (a programmer error), in
//   every build type.
// - Thread safety: a pure function of its arguments; concurrent calls on disjoint dst are safe.
//
// Example:
//   const void* srcs[] = {rank0_buf, rank1_buf};
//   hostReduce(DataType::kFloat16, ReduceOp::kAvg, out, srcs, 2, n, /*finalize=*/true, /*world_size=*/2);
#pragma once

#include <cstddef>

#include "peerreduce/types.h"

namespace peerreduce::kernels {

// finalize: apply avg's division by world_size (only meaningful when op is kAvg; a no-op otherwise).
// Pass false for partial reductions whose result is combined further; world_size is read only when
// finalize is true and op is kAvg.
void hostReduce(peerreduce::DataType dtype, peerreduce::ReduceOp op, void* dst, const void* const* srcs, int nsrc,
                std::size_t count, bool finalize, int world_size);

}  // namespace peerreduce::kernels
