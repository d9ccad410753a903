// The take table libpeerreduce_nccl.so ships: where peerreduce was measured faster than NCCL on the
// machines it was benchmarked on, used by every communicator unless PEERREDUCE_NCCL_TAKE_TABLE names
// another file (a file with only its header line measures nothing: every call gets the default of
// take_policy.h). Rows are keyed by architecture ("sm_90": H100 and H200 over NVLink), world size and
// dtype class; every other case is unmeasured.
#pragma once

#include <string_view>

#include "nccl/take_table.h"

namespace peerreduce::nccl {

std::string_view builtinTakeText();
// Parsed once; the text is part of the library, so it always parses (nccl.Core.BuiltinTakeTable* proves it).
const TakeTable& builtinTakeTable();

}  // namespace peerreduce::nccl
