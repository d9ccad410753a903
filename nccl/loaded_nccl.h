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

// The real NCCL's `function` as loaded, or null when the library is not loaded (yet, or at all) or lacks
// it. Loads nothing: for calls the real NCCL makes to its own exported functions (exports.cc).
void* loadedRealSymbol(NcclFunction function);

// While one lives, this thread is inside a call into the real NCCL (every LoadedNccl call makes one). The
// real library may call its own exported functions through its symbol table, which with this library
// preloaded resolves to ours: exports.cc sends such calls straight back (insideRealCall()).
class RealCallScope {
 public:
  RealCallScope();
  ~RealCallScope();
  RealCallScope(const RealCallScope&) = delete;
  RealCallScope& operator=(const RealCallScope&) = delete;
};
bool insideRealCall();

}  // namespace peerreduce::nccl
