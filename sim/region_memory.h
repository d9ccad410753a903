// RegionMemory: the host memory behind one simulated rank's symmetric region, mapped from the OS.
//
// Why a mapping rather than new[]: a region is megabytes and the property suites and the fault campaign
// create and destroy thousands of worlds. Under AddressSanitizer (the CI build) a heap block that large
// has its whole shadow written when it is allocated and again when it is freed into the quarantine, and
// those writes, with the page faults they cause, were about a quarter of a small property case's time. An
// anonymous private mapping has no heap shadow to write, its pages are zero and become resident only where
// a plan writes them (as a fresh heap block of this size was before), and an access past its end faults in
// every build.
#pragma once

#include <cstddef>

namespace peerreduce::sim {

class RegionMemory {
 public:
  RegionMemory() = default;
  ~RegionMemory();
  RegionMemory(RegionMemory&& other) noexcept;
  RegionMemory& operator=(RegionMemory&& other) noexcept;
  RegionMemory(const RegionMemory&) = delete;
  RegionMemory& operator=(const RegionMemory&) = delete;

  // `bytes` of zeroed memory, or an empty object when the OS refuses (or bytes is 0).
  static RegionMemory map(std::size_t bytes);

  std::byte* get() const { return base_; }
  explicit operator bool() const { return base_ != nullptr; }
  void reset();  // unmaps; empty afterwards

 private:
  std::byte* base_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace peerreduce::sim
