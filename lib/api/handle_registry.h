// The C API's live handles. A C caller holds raw pointers (prComm_t, ...); one that uses a
// handle after destroying it, destroys it twice, or passes a pointer that never was a handle would
// make the library touch freed or foreign memory. Every function that takes a handle first asks this
// registry, without dereferencing the pointer, and refuses an unknown one with kInvalidArgument.
//
// Limits: a new handle allocated at a destroyed one's address makes the stale pointer valid again
// (the allocator decides addresses); destroying a handle while another thread still uses it is the
// caller's race, as documented in peerreduce.h.
#pragma once

#include <mutex>
#include <unordered_set>

namespace peerreduce::capi {

class HandleRegistry {
 public:
  // May throw std::bad_alloc (callers run inside guarded()).
  void add(const void* handle);
  // True if `handle` was live; it is not afterwards.
  bool remove(const void* handle);
  bool contains(const void* handle) const;

 private:
  mutable std::mutex mutex_;
  std::unordered_set<const void*> live_;
};

// The live communicators. Other handle kinds (the simulator's worlds) keep registries of their own.
HandleRegistry& liveComms();

}  // namespace peerreduce::capi
