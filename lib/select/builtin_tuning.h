// The tuning table peerreduce ships: measured choices for the machines it was benchmarked on, used by
// every communicator whose configuration names no tuning file (PEERREDUCE_TUNING_FILE). Entries are
// keyed by architecture, so they apply only to that device ("sm_90": H100 / H200 over NVLink); every
// other device, and the simulator, keeps the cost model's choices. A tuning file replaces this table
// (a file with only its header line turns measured choices off).
#pragma once

#include <string_view>

#include "select/tuning_table.h"

namespace peerreduce {

std::string_view builtinTuningText();
// Parsed once; the text is part of the library, so it always parses (a test proves it).
const TuningTable& builtinTuningTable();

}  // namespace peerreduce
