// The runtime's answer for BufferPlacement (gpu/buffer_placement.h) on this build's GPU platform.
#pragma once

#include "gpu/buffer_placement.h"

namespace peerreduce::gpu {

PointerFacts pointerFactsOf(const void* ptr);

}  // namespace peerreduce::gpu
