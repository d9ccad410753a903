// Host pages registered with the GPU runtime, mapped and portable (hipHostRegister), so every device of
// this process reaches them through a device pointer: the pinned pool's blocks (gpu_host_allocator.cc)
// and a peer process's host-staged region mapped by name (gpu_transport.cc). GPU builds only.
#pragma once

#include <cstddef>

#include "peerreduce/status.h"

namespace peerreduce {

// kOutOfMemory naming the runtime's error and the settings to change.
Status registerHostPages(void* ptr, std::size_t bytes);
void unregisterHostPages(void* ptr, std::size_t bytes);

}  // namespace peerreduce
