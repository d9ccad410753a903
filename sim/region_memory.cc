#include "region_memory.h"

#include <sys/mman.h>

#include <utility>

namespace peerreduce::sim {

RegionMemory RegionMemory::map(std::size_t bytes) {
  RegionMemory out;
  if (bytes == 0) return out;
  // MAP_NORESERVE: a region a plan touches only in part commits only the pages it touches.
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return out;
  out.base_ = static_cast<std::byte*>(base);
  out.bytes_ = bytes;
  return out;
}

RegionMemory::~RegionMemory() { reset(); }

RegionMemory::RegionMemory(RegionMemory&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

RegionMemory& RegionMemory::operator=(RegionMemory&& other) noexcept {
  if (this != &other) {
    reset();
    base_ = std::exchange(other.base_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void RegionMemory::reset() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
  base_ = nullptr;
  bytes_ = 0;
}

}  // namespace peerreduce::sim
