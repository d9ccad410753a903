// The real NCCL this process forwards to, loaded once at the first call that needs it (library_loader.h,
// the library named by PEERREDUCE_NCCL_LIB or NCCL's soname), as the dispatch core's RealNccl. Part of the
// exported layer: it casts every symbol to its exact type from the toolkit's nccl.h.
#pragma once

#include "nccl/real_nccl.h"
#include "peerreduce/status.h"

namespace peerreduce::nccl {

// The same answer for the life of the process: the library, or why it could not be loaded. Never
// unloaded (the application may call NCCL from its static destructors).
StatusOr<RealNccl*> loadedRealNccl();

}  // namespace peerreduce::nccl
