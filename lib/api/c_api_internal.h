// Shared by the C API's two halves (lib/api/c_api.cc and sim/c_api_sim.cc): the opaque handle types,
// the per-thread last error, the exception barrier and the prConfig_t conversion (internal).
#pragma once

#include <exception>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>

#include "api/handle_registry.h"
#include "api/split_placement.h"
#include "config/settings_registry.h"
#include "peerreduce/communicator.h"
#include "peerreduce/config.h"
#include "peerreduce/peerreduce.h"
#include "peerreduce/status.h"

struct prComm {
  std::unique_ptr<peerreduce::Communicator> comm;
  // What the communicator's transport lives in (a simulated world, say), held so that an owner destroyed
  // too early cannot leave this communicator dangling; the contracts still say "owner outlives comms".
  std::shared_ptr<const void> owner;
  // On GPUs: the device it was created on (Config::device resolved); a shrunk communicator keeps it (-1
  // on the simulator and for transports an application made).
  int device = -1;
  // The bootstrap it was created with: the split (prCommSplit) meets the ranks through it.
  std::shared_ptr<peerreduce::Bootstrap> bootstrap;
  // Where the children of a split of it run (a simulated world's own); empty: on GPUs.
  peerreduce::capi::SplitPlacement placement;
};

namespace peerreduce::capi {

// Makes this thread's last error "<function>: <code name>: <parts...>" and returns the code as a
// prResult_t. Never throws: if the message cannot be allocated, a fixed text is kept instead.
prResult_t recordError(const char* function, ErrorCode code, std::initializer_list<std::string_view> parts) noexcept;
prResult_t recordError(const char* function, const Status& status) noexcept;

// prInvalidArgument for a NULL handle or out-pointer: "<argument> is NULL; <hint>".
inline prResult_t nullArgument(const char* function, const char* argument, const char* hint) noexcept {
  return recordError(function, ErrorCode::kInvalidArgument, {argument, " is NULL; ", hint});
}

// prInvalidArgument for a handle that is not live (destroyed, or never made by this library). The
// pointer is only compared, never read.
inline prResult_t unknownHandle(const char* function, const char* argument, const char* hint) noexcept {
  return recordError(function, ErrorCode::kInvalidArgument,
                     {argument, " is not a live handle (destroyed already, or not made by peerreduce); ", hint});
}

// prSuccess, or the error of `status` recorded for `function`.
inline prResult_t toResult(const char* function, const Status& status) noexcept {
  return status.isOk() ? prSuccess : recordError(function, status);
}

inline constexpr const char* kCommHint =
    "pass a communicator made by prCommInitRank, prCommInitSimAll or prCommInitSimRank";

// prSuccess when `comm` is a live communicator, else the error recorded for `function`.
inline prResult_t checkComm(const char* function, prComm_t comm) noexcept {
  if (comm == nullptr) return nullArgument(function, "comm", kCommHint);
  if (!liveComms().contains(comm)) return unknownHandle(function, "comm", kCommHint);
  return prSuccess;
}

// The settings `config` describes, validated; NULL means the defaults with the PEERREDUCE_* environment
// applied (c_config.cc).
StatusOr<Config> toConfig(const prConfig_t* config);
// `config` as a prConfig_t (struct_size set); kInvalidArgument when a text does not fit its field.
StatusOr<prConfig_t> fromConfig(const Config& config);
// The registry settings prConfig_t holds, one per field, in field order.
std::span<const SettingId> configFieldSettings();

// Runs `body` (returning prResult_t) so that no exception reaches the C caller.
template <typename Body>
prResult_t guarded(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return recordError(function, ErrorCode::kOutOfMemory, {"out of host memory"});
  } catch (const std::exception& e) {
    return recordError(function, ErrorCode::kInternal,
                       {"unexpected exception (", e.what(), "); this is a peerreduce bug, please report it"});
  } catch (...) {
    return recordError(function, ErrorCode::kInternal,
                       {"unexpected non-standard exception; this is a peerreduce bug, please report it"});
  }
}

}  // namespace peerreduce::capi
