// Validation of the collectives' arguments, shared by the C++ and C APIs. Each check returns
// kInvalidArgument naming the call, the rank, the argument, the value and the rule; nothing is touched
// before it passes. Buffer rules are NCCL's: a user buffer is not null (where it is read or written),
// aligned to its elements, inside the address space; send and recv are disjoint unless the call is in
// place, and in place means the one aliasing NCCL allows for that collective.
#pragma once

#include <cstddef>

#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce {

Status checkAllreduceArguments(const void* send, const void* recv, std::size_t count, DataType dtype, ReduceOp op,
                               int rank);
// send: size x recvcount elements; recv: recvcount; in place when recv == send + rank x recvcount.
Status checkReduceScatterArguments(const void* send, const void* recv, std::size_t recvcount, DataType dtype,
                                   ReduceOp op, int rank, int size);
// send: sendcount elements; recv: size x sendcount; in place when send == recv + rank x sendcount.
Status checkAllGatherArguments(const void* send, const void* recv, std::size_t sendcount, DataType dtype, int rank,
                               int size);
// send (read on the root only, may be null elsewhere) and recv: count elements; in place when send == recv.
Status checkBroadcastArguments(const void* send, const void* recv, std::size_t count, DataType dtype, int root,
                               int rank, int size);

}  // namespace peerreduce
