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

// 30 minutes: the bound on every wait of peerreduce's side of an NCCL communicator unless
// PEERREDUCE_TIMEOUT_MS is set. NCCL itself waits until the application aborts the communicator, and the
// application's deadline is not visible here (ncclConfig_t has no timeout; PyTorch keeps its process-group
// timeout, 10 minutes by default, to itself and calls ncclCommAbort from its watchdog when it passes). A
// bound above that default lets the caller's deadline decide, as with NCCL, so a rank that is minutes late
// (writing a checkpoint) does not end the run, while a wait still ends by itself if nobody aborts (the
// project's rule: every wait has a finite deadline and is abortable). peerreduce's own default, 30 s,
// suits applications that link it and watch their calls themselves.
inline constexpr std::int64_t kNcclTimeoutMs = std::int64_t{30} * 60 * 1000;

struct NcclSettings {
  TakeSettings take;
  // PEERREDUCE_NCCL_TAKE_TABLE's table, or the built-in one (builtin_take_table.h); never null once read.
  std::shared_ptr<const TakeTable> take_table;
  // The bound on every wait of peerreduce's side: PEERREDUCE_TIMEOUT_MS when set, else kNcclTimeoutMs.
  std::int64_t timeout_ms = kNcclTimeoutMs;
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
