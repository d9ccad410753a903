// RegisteredBuffer: a user buffer registered with a communicator (Communicator::registerBuffer), and
// every peer's registered buffer as this rank reaches it.
//
// Registration is collective, like NCCL's window registration: every rank registers its own buffer at
// the same point of its call sequence; the ranks exchange the records through the Bootstrap and each
// opens its peers' buffers. GPU IPC shares whole allocations, so what peers receive names the
// allocation's base and the buffer's offset inside it; registering another range of an allocation
// already registered reuses its export (the communicator's registration cache, keyed by base).
//
// Ownership: copies share one registration. It ends when Communicator::deregisterBuffer is called
// (collective) or when the communicator is destroyed; the handle may outlive both, and then valid() is
// false and peer() refuses. Same thread rules as the Communicator.
//
// Example:
//   auto reg = comm->registerBuffer(buf, bytes).value();   // on every rank
//   auto right = reg.peer((comm->rank() + 1) % comm->size()).value();  // right.data, right.bytes
//   PR_RETURN_IF_ERROR(comm->deregisterBuffer(reg));         // on every rank
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "peerreduce/status.h"
#include "peerreduce/transport.h"

namespace peerreduce {

namespace detail {
// Shared by the handles of one registration and by the communicator that made it.
struct RegisteredBufferState {
  bool live = true;             // false once deregistered or its communicator is gone
  const void* owner = nullptr;  // the communicator's state: deregistering elsewhere is refused
  const void* data = nullptr;
  std::size_t bytes = 0;
  const void* allocation_base = nullptr;
  std::size_t allocation_bytes = 0;
  std::size_t offset = 0;             // of data in its allocation
  std::vector<PeerBufferView> peers;  // by rank; this rank's entry is its own buffer
};
}  // namespace detail

class RegisteredBuffer {
 public:
  RegisteredBuffer() = default;
  bool valid() const { return state_ != nullptr && state_->live; }
  const void* data() const { return state_ ? state_->data : nullptr; }
  std::size_t size() const { return state_ ? state_->bytes : 0; }
  // The allocation that was exported, and the buffer's offset in it: what peers add to the base.
  const void* allocationBase() const { return state_ ? state_->allocation_base : nullptr; }
  std::size_t allocationBytes() const { return state_ ? state_->allocation_bytes : 0; }
  std::size_t offset() const { return state_ ? state_->offset : 0; }

  // Rank `rank`'s registered buffer as this rank reaches it (its own for rank()). kInvalidArgument for
  // a rank outside the world or a registration that has ended.
  StatusOr<PeerBufferView> peer(int rank) const;
  // [offset, offset + length) of rank `rank`'s buffer; kInvalidArgument when it leaves that buffer.
  StatusOr<std::span<std::byte>> peerBytes(int rank, std::size_t offset, std::size_t length) const;

 private:
  friend class Communicator;
  explicit RegisteredBuffer(std::shared_ptr<detail::RegisteredBufferState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::RegisteredBufferState> state_;
};

}  // namespace peerreduce
