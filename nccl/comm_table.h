// peerreduce's state of the NCCL communicators this library made, found from the handle the application
// holds, which is the real NCCL's own communicator. So every function of NCCL's API this library does not
// export (ncclCommWindowRegister, the device API, ...) reaches the real NCCL with a handle it knows, and a
// handle this table lacks (a communicator made by a function the library does not wrap, one destroyed
// already, a foreign pointer) is forwarded untouched, for the real NCCL to serve or refuse as it would
// without this library.
//
// Bounded (kMaxComms live communicators); entries are removed at destroy and abort. Thread-safe: lookups,
// insertions and removals from any thread. Entries are shared: a call holds the state it found until it
// returns, so an ncclCommAbort from another thread (PyTorch's watchdog aborts a communicator whose
// collective hangs) removes the entry and aborts peerreduce's side at once, and the state is freed when
// the last call using it returns.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "nccl/shadowed_comm.h"
#include "peerreduce/status.h"

namespace peerreduce::nccl {

// Far more communicators than one process holds at once (each real one holds GPU memory and channels).
inline constexpr std::size_t kMaxComms = 65536;

class CommTable {
 public:
  explicit CommTable(std::size_t capacity = kMaxComms) : capacity_(capacity) {}

  // Adds `comm` under its real handle. Errors: kInvalidArgument for a null handle or one already present
  // (the real NCCL handed out a live handle twice), kUnavailable when `capacity` are live.
  Status add(std::shared_ptr<ShadowedComm> comm);
  // The state of the real communicator `real`; null when the table has none.
  std::shared_ptr<ShadowedComm> find(const void* real) const;
  // Removes the entry of `real` and hands it over; null when there was none.
  std::shared_ptr<ShadowedComm> remove(const void* real);
  std::size_t size() const;

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<const void*, std::shared_ptr<ShadowedComm>> comms_;
};

}  // namespace peerreduce::nccl
