#include "api/handle_registry.h"

namespace peerreduce::capi {

void HandleRegistry::add(const void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.insert(handle);
}

bool HandleRegistry::remove(const void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.erase(handle) == 1;
}

bool HandleRegistry::contains(const void* handle) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.count(handle) == 1;
}

// Function-local statics: constructed on first use, so handles made during static initialisation of
// another translation unit still find a registry.
HandleRegistry& liveComms() {
  static HandleRegistry registry;
  return registry;
}

}  // namespace peerreduce::capi
