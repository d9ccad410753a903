// The one path from a communicator's operation to its transport: an allreduce, a batch group, a
// reduce-scatter, all-gather or broadcast describe what to run as an Operation (the plan says which
// collective, its blocks and its root); submitOperation splits it into segments
// that fit the channel's scratch, builds each ExecutionRequest, submits them in order and profiles the
// whole when profiling is on.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "api/communicator_impl.h"
#include "peerreduce/plan.h"
#include "peerreduce/transport.h"
#include "peerreduce/types.h"

namespace peerreduce {

struct Operation {
  std::shared_ptr<const Plan> plan;
  Algorithm algorithm = Algorithm::kAuto;  // what the profile reports
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  const void* send = nullptr;  // null for a batch
  void* recv = nullptr;        // null for a batch
  std::size_t count = 0;       // elements per block (a batch: over all its items); Plan::num_blocks blocks
  // Elements from one block's start to the next in the buffer that holds every block; 0: `count` (the
  // blocks are contiguous, as the public calls have them).
  std::size_t block_stride = 0;
  // Non-empty: one launch over these items (at most the transport's batch capacity, within one segment
  // of scratch), instead of send/recv.
  std::span<const BatchItem> batch;
  int batch_items = 1;  // buffers reduced (a batch: its non-empty items), for the profile
};

// Submits `operation` on `stream`, in channel `where` with `scratch` (the channel's lease, pinned by the
// caller's copy until this returns), in segments of at most `segment` elements (a batch: one). Stops at
// the first segment the transport refuses and returns its error; the profile records what was submitted.
Status submitOperation(Communicator::Impl& impl, const Operation& operation, const OperationChannel& where,
                       const PoolBlock& scratch, std::size_t segment, StreamHandle stream);

// The same on the stream's slot and scratch lease, in the largest segments the scratch holds; kOutOfMemory
// naming `call` ("reduceScatter") when not even one segment fits.
Status submitOperation(Communicator::Impl& impl, const Operation& operation, StreamHandle stream, const char* call);

}  // namespace peerreduce
