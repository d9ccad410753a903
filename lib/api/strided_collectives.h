// Reduce-scatter and all-gather over blocks that are not contiguous in the buffer that holds every block:
// block b starts b x block_stride elements after block 0 (the public calls have block_stride = count).
// A communicator across machines runs its steps on the blocks of one machine or of one local rank,
// which lie evenly spaced in the user's buffer (docs/MULTI_MACHINE.md): the plans are the ordinary ones,
// the transports address user chunks by ExecutionRequest::block_stride already.
//
// Arguments are the library's own (a bad stride is kInternal); in place as the public calls, with the
// stride: reduce-scatter's recv == send + rank x block_stride, all-gather's send == recv + rank x block_stride.
#pragma once

#include <cstddef>

#include "peerreduce/communicator.h"

namespace peerreduce {

// send: block b at send + b x block_stride (count elements each); recv: count elements.
Status reduceScatterStrided(Communicator& comm, const void* send, void* recv, std::size_t count,
                            std::size_t block_stride, DataType dtype, ReduceOp op, StreamHandle stream);
// send: count elements; recv: block b at recv + b x block_stride.
Status allGatherStrided(Communicator& comm, const void* send, void* recv, std::size_t count, std::size_t block_stride,
                        DataType dtype, StreamHandle stream);

}  // namespace peerreduce
