#include "nccl/library_loader.h"

#include <dlfcn.h>
#include <link.h>

#include <string_view>

namespace peerreduce::nccl {
namespace {

// The shared object holding `address`, or null when the dynamic linker knows of none.
const void* objectBase(const void* address, std::string* file) {
  Dl_info info{};
  if (address == nullptr || dladdr(address, &info) == 0) return nullptr;
  if (file != nullptr && info.dli_fname != nullptr) *file = info.dli_fname;
  return info.dli_fbase;
}

// The file the dynamic linker opened for `handle` (a soname resolves to a path).
std::string openedFile(void* handle, const std::string& requested) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr || *map->l_name == 0) {
    return requested;
  }
  return map->l_name;
}

std::string whatToSet(bool from_setting) {
  return from_setting ? "check PEERREDUCE_NCCL_LIB: it must name the real libnccl.so.2 (docs/NCCL.md)"
                      : "install NCCL where the dynamic linker finds libnccl.so.2, or set PEERREDUCE_NCCL_LIB to "
                        "its path (docs/NCCL.md)";
}

std::string source(const std::string& requested, bool from_setting) {
  return "'" + requested + "'" + (from_setting ? " (PEERREDUCE_NCCL_LIB)" : " (NCCL's soname)");
}

}  // namespace

StatusOr<LoadedLibrary> loadNcclLibrary(const std::string& requested, bool from_setting, const void* own_symbol) {
  // RTLD_NOW: a dependency that cannot be resolved fails here rather than at some later call.
  // RTLD_LOCAL: the real NCCL's symbols stay out of the global scope, where ours are the application's.
  dlerror();
  void* handle = dlopen(requested.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return unavailableError("cannot load the real NCCL " + source(requested, from_setting) + ": " +
                            (why != nullptr ? why : "the dynamic linker gave no reason") + "; " +
                            whatToSet(from_setting));
  }
  LoadedLibrary loaded;
  loaded.handle = handle;
  loaded.requested = requested;
  loaded.file = openedFile(handle, requested);
  std::string own_file;
  const void* own_base = objectBase(own_symbol, &own_file);
  std::string missing;
  for (const NcclFunctionInfo& info : kNcclFunctions) {
    const std::string name(info.name);
    dlerror();
    void* symbol = dlsym(handle, name.c_str());
    if (symbol != nullptr && own_base != nullptr && objectBase(symbol, nullptr) == own_base) {
      // Not dlclose'd: the handle may be this very library, which must stay loaded.
      return invalidArgumentError(source(requested, from_setting) + " is libpeerreduce_nccl itself (" + own_file +
                                  " defines its " + name + "), not the real NCCL it forwards to; " +
                                  whatToSet(from_setting));
    }
    if (symbol == nullptr && info.required) missing += (missing.empty() ? "" : ", ") + name;
    loaded.symbols[static_cast<std::size_t>(info.function)] = symbol;
  }
  if (!missing.empty()) {
    dlclose(handle);
    return invalidArgumentError(source(requested, from_setting) + " (" + loaded.file + ") is not NCCL: it lacks " +
                                missing + ", which every NCCL since " + std::string(kRequiredSince) + " has; " +
                                whatToSet(from_setting));
  }
  return loaded;
}

}  // namespace peerreduce::nccl
