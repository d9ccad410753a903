// Host entry point to the reduce arithmetic: picks the element type and op at run time.
//
// Contract:
// - Computes, for every i < count, exactly what reduceElements<T, Op> in reduce_ops.h computes: the
//   sources folded left to right in the order given, in the accumulation type, then stored; for avg, the
//   sources marked in `from_send` premultiplied by 1/world_size (floating types) and the final reduction
//   divided by world_size (integers). The bits are identical to the device kernels' for the same order.
// - dst may be exactly one of the sources (in place); partially overlapping ranges are not allowed.
// - Pointers need no alignment: any byte address works (the data is copied through aligned blocks).
// - Preconditions (the caller validates user input before calling): nsrc >= 1, valid dtype and op,
//   world_size >= 1 for avg, count elements readable at each source and writable at dst, nsrc entries at
//   from_send when it is not null.
//   A violated nsrc/dtype/op/world_size precondition aborts with a message (a programmer error), in
//   every build type.
// - Thread safety: a pure function of its arguments; concurrent calls on disjoint dst are safe.
//
// Example:
//   const void* srcs[] = {rank0_send, rank1_send};
//   const std::uint8_t from_send[] = {1, 1};
//   hostReduce(DataType::kFloat16, ReduceOp::kAvg, out, srcs, 2, n, /*finalize=*/true, /*world_size=*/2, from_send);
#pragma once

#include <cstddef>
#include <cstdint>

#include "peerreduce/types.h"

namespace peerreduce::kernels {

// For avg only (every other op ignores them; kernels::AvgStep): finalize: this is the chunk's final
// reduction, where an integer avg divides its sum by world_size (false for partial reductions combined
// further); from_send: per source, 1 when it is a send buffer, whose elements a floating avg premultiplies
// by 1/world_size (null: no source is). A copy out of a send buffer under a floating avg is a reduction of
// that one source with from_send = {1}.
void hostReduce(peerreduce::DataType dtype, peerreduce::ReduceOp op, void* dst, const void* const* srcs, int nsrc,
                std::size_t count, bool finalize, int world_size, const std::uint8_t* from_send = nullptr);

}  // namespace peerreduce::kernels
