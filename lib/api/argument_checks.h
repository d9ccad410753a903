// Validation of allreduce arguments, shared by the C++ and C APIs. Each check returns
// kInvalidArgument naming the argument, the value and the rule; nothing is touched before it passes.
#pragma once

#include <cstddef>

#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce {

Status checkAllreduceArguments(const void* send, const void* recv, std::size_t count, DataType dtype, ReduceOp op,
                               int rank);

}  // namespace peerreduce
