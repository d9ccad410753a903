// NCCL's values in peerreduce's terms: data types and reduction operators peerreduce runs with NCCL's
// exact meaning, element sizes and names for messages, and the NCCL result a peerreduce error becomes.
#pragma once

#include <cstddef>
#include <optional>

#include "nccl/nccl_values.h"
#include "peerreduce/peerreduce.h"
#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce::nccl {

// The peerreduce type of an NCCL data type (every one has one: ncclFloat8e4m3 and ncclFloat8e5m2 are
// peerreduce's fp8e4m3 and fp8e5m2, with NCCL's arithmetic, peerreduce/types.h); nullopt for values that are
// no NCCL type.
std::optional<DataType> peerreduceDataType(int nccl_dtype);
// Bytes per element; 0 for a value that is no NCCL type.
std::size_t ncclDataTypeBytes(int nccl_dtype);
// peerreduce's name of the type: "fp32", "bf16", "fp8e4m3", ...; "unknown" for other values.
const char* ncclDataTypeName(int nccl_dtype);

// The peerreduce operator computing what NCCL's does: sum, prod, min, max and avg (peerreduce's avg is
// NCCL's: floating inputs premultiplied by NCCL's 1/nranks, integer sums divided; whether avg is taken is
// the take policy's PEERREDUCE_NCCL_TAKE_AVG). nullopt for operators the application created and other
// values.
std::optional<ReduceOp> peerreduceReduceOp(int nccl_op);
// "sum", "avg", "created operator 5", ...; the text lives in a static buffer per thread for created ones.
const char* ncclRedOpName(int nccl_op);

// The same as the C API's values, for types and operators the take decision accepted (others: an invalid
// value, which the C API refuses).
prDataType_t toPrDataType(int nccl_dtype);
prRedOp_t toPrRedOp(int nccl_op);

// A failed call of peerreduce's C API as a Status: its result's code and this thread's prGetLastError(), which
// names the function already ("prCommInitRank: invalid argument: ..."). Call it right after the call.
Status cApiFailure(prResult_t result);

// The ncclResult_t a peerreduce error becomes: the argument errors ncclInvalidArgument, what the caller
// asked in the wrong state or of ranks that disagree ncclInvalidUsage, peers and links ncclRemoteError,
// missing resources ncclSystemError, bugs ncclInternalError.
NcclResult ncclResultFor(ErrorCode code);

}  // namespace peerreduce::nccl
