// One NCCL collective or point-to-point call with its arguments, so that the same call can be decided,
// forwarded to the real NCCL, run by peerreduce, or kept in a group until ncclGroupEnd.
#pragma once

#include <cstddef>
#include <memory>

#include "nccl/real_nccl.h"
#include "nccl/shadowed_comm.h"
#include "nccl/take_policy.h"
#include "peerreduce/peerreduce.h"

namespace peerreduce::nccl {

struct CollectiveCall {
  CallKind kind = CallKind::kAllReduce;
  void* real_comm = nullptr;     // the application's handle: the real NCCL communicator
  ShadowedComm* comm = nullptr;  // peerreduce's state of it
  const void* send = nullptr;    // ncclSend's buffer too
  void* recv = nullptr;          // ncclRecv's buffer too
  std::size_t count = 0;         // the count argument as NCCL takes it (recvcount, sendcount)
  int dtype = 0;
  int op = 0;    // reducing kinds
  int root = 0;  // the root of ncclBroadcast, ncclBcast (its buffer is recv), ncclReduce, ncclGather and
                 // ncclScatter; ncclSend and ncclRecv's peer
  void* stream = nullptr;
  // Keeps `comm` alive while the call (or the group keeping it) may still use it.
  std::shared_ptr<ShadowedComm> pin;
};

// The decision's view of the call: its whole buffer in bytes (nccl-tests' size: reduce-scatter's input and
// all-gather's output hold nranks blocks), SIZE_MAX when that overflows or the type is unknown. Needs comm.
CallShape shapeOf(const CollectiveCall& call);

// The call as the real NCCL takes it, on the real communicator; the real result.
int forwardCall(RealNccl& real, const CollectiveCall& call);

// The call enqueued on peerreduce's side (prAllReduce, ...): the C API's result. Only for kinds and types
// the take decision accepted.
prResult_t takeCall(const CollectiveCall& call);

}  // namespace peerreduce::nccl
