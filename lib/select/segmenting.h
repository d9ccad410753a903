// Segmenting: splitting one user operation into pieces that fit the scratch.
//
// A plan needs scratch_slots x slot bytes per rank (peerreduce/plan.h). When a message is larger than
// that allows, the communicator runs the plan on consecutive segments of the buffer, one after
// another; each segment is an ordinary operation (its own epoch), so correctness is unchanged and only
// the time grows. Every rank computes the same segments from the same inputs.
#pragma once

#include <cstddef>

#include "peerreduce/plan.h"

namespace peerreduce {

// Largest element count a single execution of `plan` can carry in `scratch_bytes`; 0 if not even one
// aligned element per chunk fits. Returns SIZE_MAX for plans that need no scratch.
std::size_t maxSegmentCount(const Plan& plan, std::size_t elem_size, std::size_t scratch_bytes);

}  // namespace peerreduce
