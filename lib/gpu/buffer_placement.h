// Whether a user buffer is memory of the communicator's device, checked before an operation's kernel
// reads or writes it. A buffer elsewhere (host memory, another GPU's memory, a pointer the runtime does
// not know) would make the kernel fault with an illegal address, or reach another device over its link;
// it gets a typed error instead, naming the pointer and where it lives, and nothing is enqueued.
//
// The check asks the runtime about the pointer (a driver call) only for allocations it has not seen:
// the allocations found good are remembered (a few, most recent first), so an application that reuses
// its buffers pays a comparison per operation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "peerreduce/status.h"

namespace peerreduce::gpu {

// What the runtime says of a pointer: the device whose memory it is (-1: not device memory), and the
// allocation containing it (empty when unknown).
struct PointerFacts {
  int device = -1;
  std::uintptr_t allocation_begin = 0;
  std::uintptr_t allocation_end = 0;
};

class BufferPlacement {
 public:
  // `facts` asks the runtime (injectable for tests); the GPU transport passes pointerFactsOf.
  using FactsFn = PointerFacts (*)(const void* ptr);
  BufferPlacement(int rank, int device, FactsFn facts) : rank_(rank), device_(device), facts_(facts) {}

  // Ok when [ptr, ptr + bytes) lies in device memory of this communicator's device (or bytes is 0);
  // else kInvalidArgument naming `what` ("send buffer", "receive buffer", "batch item 3's send buffer"),
  // the pointer and where it lives.
  Status check(const void* ptr, std::size_t bytes, const char* what);

 private:
  static constexpr std::size_t kRemembered = 8;  // allocations an application typically reuses
  struct Range {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
  };
  bool known(std::uintptr_t begin, std::uintptr_t end) const;

  int rank_;
  int device_;
  FactsFn facts_;
  std::array<Range, kRemembered> known_{};
  std::size_t next_ = 0;  // the slot the next good allocation replaces
};

}  // namespace peerreduce::gpu
