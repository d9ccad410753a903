#include "gpu/buffer_placement.h"

#include <cstdio>
#include <string>

namespace peerreduce::gpu {
namespace {

std::string pointerText(const void* ptr) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", ptr);
  return text;
}

}  // namespace

bool BufferPlacement::known(std::uintptr_t begin, std::uintptr_t end) const {
  for (const Range& r : known_) {
    if (r.begin < r.end && begin >= r.begin && end <= r.end) return true;
  }
  return false;
}

Status BufferPlacement::check(const void* ptr, std::size_t bytes, const char* what) {
  if (bytes == 0) return Status::ok();
  const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
  if (begin + bytes < begin) {
    return invalidArgumentError("rank " + std::to_string(rank_) + ": the " + what + " at " + pointerText(ptr) +
                                " with " + std::to_string(bytes) + " bytes runs past the end of the address space");
  }
  const std::uintptr_t end = begin + bytes;
  if (known(begin, end)) return Status::ok();
  const PointerFacts facts = facts_(ptr);
  if (facts.device != device_) {
    const std::string where = facts.device < 0 ? "host memory or memory the GPU runtime does not know"
                                               : "memory of device " + std::to_string(facts.device);
    return invalidArgumentError("rank " + std::to_string(rank_) + ": the " + what + " at " + pointerText(ptr) + " is " +
                                where + ", not of device " + std::to_string(device_) +
                                ", this communicator's; pass buffers allocated on device " + std::to_string(device_));
  }
  if (facts.allocation_end <= facts.allocation_begin) return Status::ok();  // range unknown: nothing to remember
  if (facts.allocation_begin > begin || facts.allocation_end < end) {
    return invalidArgumentError("rank " + std::to_string(rank_) + ": the " + what + " at " + pointerText(ptr) +
                                " with " + std::to_string(bytes) + " bytes runs past the end of its allocation");
  }
  known_[next_] = Range{facts.allocation_begin, facts.allocation_end};
  next_ = (next_ + 1) % kRemembered;
  return Status::ok();
}

}  // namespace peerreduce::gpu
