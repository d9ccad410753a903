// SymmetricBlock::bytes: the bounds-checked view of this rank's bytes of a symmetric block.
#include <string>

#include "peerreduce/memory.h"

namespace peerreduce {

StatusOr<std::span<std::byte>> SymmetricBlock::bytes(std::size_t offset, std::size_t length) const {
  if (!valid()) return invalidArgumentError("symmetric block: the handle is empty (reset or never allocated)");
  if (offset > size_ || length > size_ - offset) {
    return invalidArgumentError("symmetric block at pool offset " + std::to_string(offset_) + ": range at offset " +
                                std::to_string(offset) + " of " + std::to_string(length) +
                                " bytes leaves the block of " + std::to_string(size_) + " bytes");
  }
  if (local_ == nullptr) {
    return unsupportedError("symmetric block at pool offset " + std::to_string(offset_) +
                            ": the transport's region is not host-addressable (device memory)");
  }
  return std::span<std::byte>(local_ + offset, length);
}

}  // namespace peerreduce
