// The PEERREDUCE_NCCL_* settings (rows of lib/config/settings_registry.cc), read by the NCCL-compatible
// library: the library to load once per process, the rest at each communicator's creation.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "nccl/take_policy.h"
#include "nccl/take_table.h"
#include "peerreduce/status.h"
#include "util/setting_spec.h"

namespace peerreduce::nccl {

struct NcclSettings {
  TakeSettings take;
  // PEERREDUCE_NCCL_TAKE_TABLE's table, or the built-in one (builtin_take_table.h); never null once read.
  std::shared_ptr<const TakeTable> take_table;
  bool summary = false;                        // PEERREDUCE_NCCL_SUMMARY
  std::optional<std::uint64_t> simulate_seed;  // PEERREDUCE_NCCL_SIMULATE: tests only

  // Hash of what every rank must give alike (the take mode, the size limit, the avg switch, the take
  // table's rows, the simulator): communicators compare it at creation.
  std::uint64_t agreedFingerprint() const;
};

// kInvalidArgument naming the variable for a malformed value, and naming the file and line for a take
// table that does not parse. `getenv` null: the process environment.
StatusOr<NcclSettings> readNcclSettings(const Getenv& getenv = nullptr);

struct LibraryChoice {
  std::string path;           // what to dlopen
  bool from_setting = false;  // PEERREDUCE_NCCL_LIB gave it (else NCCL's soname)
};
StatusOr<LibraryChoice> readLibraryChoice(const Getenv& getenv = nullptr);

}  // namespace peerreduce::nccl
