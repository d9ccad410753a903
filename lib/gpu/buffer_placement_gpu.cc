#include "gpu/buffer_placement_gpu.h"

#include "portability.h"

namespace peerreduce::gpu {

PointerFacts pointerFactsOf(const void* ptr) {
  PointerFacts facts;
  facts.device = deviceOfMemory(ptr);
  if (facts.device < 0) return facts;
  void* base = nullptr;
  std::size_t size = 0;
  if (hipMemGetAddressRange(&base, &size, const_cast<void*>(ptr)) == hipSuccess && base != nullptr) {
    facts.allocation_begin = reinterpret_cast<std::uintptr_t>(base);
    facts.allocation_end = facts.allocation_begin + size;
  } else {
    (void)hipGetLastError();
  }
  return facts;
}

}  // namespace peerreduce::gpu
