// peerreduce's state of the NCCL communicators this library made, found from the handle the application
// holds, which is the real NCCL's own communicator. So every function of NCCL's API this library does not
// export (ncclCommWindowRegister, the device API, ...) reaches the real NCCL with a handle it knows, and a
// handle this table lacks (a communicator made by a function the library does not wrap, one destroyed
// already, a foreign pointer) is forwarded untouched, for the real NCCL to serve or refuse as it would
// without this library.
//
// Bounded (kMaxComms live communicators); entries are removed at destroy and abort. Thread-safe: lookups,
// insertions and removals from any thread. Using a communicator while another thread destroys it is the
// application's race, as with NCCL.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "nccl/shadowed_comm.h"
#include "peerreduce/status.h"

namespace peerreduce::nccl {

// Far more communicators than one process holds at once (each real one holds GPU memory and channels).
inline constexpr std::size_t kMaxComms = 65536;

class CommTable {
 public:
  // Adds `comm` under its real handle. Errors: kInvalidArgument for a null handle or one already present
  // (the real NCCL handed out a live handle twice), kUnavailable when kMaxComms are live.
  Status add(ShadowedComm* comm);
  // The state of the real communicator `real`; null when the table has none.
  ShadowedComm* find(const void* real) const;
  // Removes `comm`; false when it was not present.
  bool remove(const ShadowedComm* comm);
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<const void*, ShadowedComm*> comms_;
};

}  // namespace peerreduce::nccl
