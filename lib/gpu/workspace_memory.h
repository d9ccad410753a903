// Memory for a collective's intermediate results, of the kind the user's buffers are: the steps that
// read and write it are ordinary collectives on user buffers, so it must be where the transports expect
// those (device memory of the same GPU for a GPU transport, host memory on the simulator and on hosts).
#pragma once

#include <cstddef>
#include <memory>

#include "peerreduce/status.h"

namespace peerreduce {

// `bytes` bytes on the device that holds `user_buffer` when it is device memory (GPU builds), else host
// memory. kOutOfMemory naming the size and the device when the allocation fails.
StatusOr<std::shared_ptr<std::byte>> allocateLikeUserBuffer(const void* user_buffer, std::size_t bytes);

// The device whose memory `user_buffer` is, -1 for host memory (every buffer in builds without a GPU).
int userBufferDevice(const void* user_buffer);

}  // namespace peerreduce
