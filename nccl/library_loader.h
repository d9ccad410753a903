// Loading the real NCCL: dlopen by the path PEERREDUCE_NCCL_LIB gives, else by NCCL's soname, and every
// function of nccl_functions.h resolved in it. Everything that can be wrong is found here, at the first
// call that needs NCCL, as a typed error, never as a crash at a later call:
// - the library cannot be loaded (missing, not a shared library, an unresolved dependency);
// - it is not NCCL: a required function is missing (the message lists every one);
// - it is this library itself (a copy or link of libpeerreduce_nccl.so named libnccl.so.2, or the setting
//   pointing at it): found by comparing the object each symbol lives in with the object of `own_symbol`,
//   since forwarding to ourselves would recurse without end.
#pragma once

#include <array>
#include <string>

#include "nccl/nccl_functions.h"
#include "peerreduce/status.h"

namespace peerreduce::nccl {

// NCCL's soname, what the dynamic linker finds when PEERREDUCE_NCCL_LIB is unset.
inline constexpr const char* kNcclSoname = "libnccl.so.2";

struct LoadedLibrary {
  // Never closed: the forwarded functions must stay valid for the life of the process (an application may
  // call NCCL from its static destructors).
  void* handle = nullptr;
  std::string requested;                            // the path or soname asked for
  std::string file;                                 // the file the dynamic linker opened, for messages
  std::array<void*, kNcclFunctionCount> symbols{};  // null for an optional function the library lacks
};

// `requested`: a path or soname; `from_setting` says whether PEERREDUCE_NCCL_LIB gave it (messages then
// name the setting). `own_symbol`: the address of a function of this library.
StatusOr<LoadedLibrary> loadNcclLibrary(const std::string& requested, bool from_setting, const void* own_symbol);

}  // namespace peerreduce::nccl
