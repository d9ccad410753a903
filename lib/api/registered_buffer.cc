// RegisteredBuffer: bounds-checked access to the buffers of one registration.
#include "peerreduce/registered_buffer.h"

#include <string>

namespace peerreduce {

StatusOr<PeerBufferView> RegisteredBuffer::peer(int rank) const {
  if (!valid()) {
    return invalidArgumentError(
        "registered buffer: the registration has ended (deregistered, its communicator "
        "destroyed, or an empty handle)");
  }
  if (rank < 0 || static_cast<std::size_t>(rank) >= state_->peers.size()) {
    return invalidArgumentError("registered buffer: rank " + std::to_string(rank) + " is outside 0.." +
                                std::to_string(static_cast<int>(state_->peers.size()) - 1));
  }
  return state_->peers[static_cast<std::size_t>(rank)];
}

StatusOr<std::span<std::byte>> RegisteredBuffer::peerBytes(int rank, std::size_t offset, std::size_t length) const {
  PR_ASSIGN_OR_RETURN(PeerBufferView view, peer(rank));
  if (offset > view.bytes || length > view.bytes - offset) {
    return invalidArgumentError("registered buffer of rank " + std::to_string(rank) + ": range at offset " +
                                std::to_string(offset) + " of " + std::to_string(length) +
                                " bytes leaves the buffer of " + std::to_string(view.bytes) + " bytes");
  }
  return std::span<std::byte>(view.data + offset, length);
}

}  // namespace peerreduce
