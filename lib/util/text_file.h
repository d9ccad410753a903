// Reading a small text file a user named (a topology file, a tuning table): only a regular file is
// read, and at most a bounded number of bytes, so that a named pipe, a device or a directory given by
// mistake is a clear error instead of a read that blocks or never ends.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "peerreduce/status.h"

namespace peerreduce {

// The contents of the regular file `path`, at most `max_bytes`. `what` names the file in messages
// ("topology file"), `hint` follows the path there when not empty ("(PEERREDUCE_TUNING_FILE)"). Errors
// (kInvalidArgument, naming the path): it cannot be opened; it is not a regular file (a FIFO, a directory, a device),
// refused without reading; it holds more than `max_bytes`.
StatusOr<std::string> readTextFile(const std::string& path, std::size_t max_bytes, std::string_view what,
                                   std::string_view hint = {});

}  // namespace peerreduce
