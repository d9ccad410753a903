// A HostAllocator for tests: real (heap) memory so ASan sees misuse, a serial number per successful
// allocation (the pool's block ids count the same way), a log of what was freed, injectable failures
// of allocate and lock, and checks that a locked block is unlocked before it is freed.
#pragma once

#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "memory/host_allocator.h"

namespace peerreduce::testing {

class FakeHostAllocator : public HostAllocator {
 public:
  // lock() fails on every `lock_fail_period`-th call (0: never).
  explicit FakeHostAllocator(int lock_fail_period = 0) : lock_fail_period_(lock_fail_period) {}
  ~FakeHostAllocator() override {
    for (auto& [p, a] : live_) std::free(p);  // only after a test failure: the pool frees everything
  }

  std::string name() const override { return "fake"; }

  StatusOr<void*> allocate(std::size_t bytes, std::size_t alignment) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_next_) {
      fail_next_ = false;
      return outOfMemoryError("fake allocator: injected failure");
    }
    void* p = std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
    if (p == nullptr) return outOfMemoryError("fake allocator: aligned_alloc failed");
    live_[p] = Allocation{++serial_, bytes};
    return p;
  }

  Status lock(void* ptr, std::size_t /*bytes*/) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++lock_calls_;
    if (lock_fail_period_ > 0 && lock_calls_ % static_cast<std::uint64_t>(lock_fail_period_) == 0) {
      return unavailableError("fake allocator: lock refused");
    }
    locked_.insert(ptr);
    return Status::ok();
  }

  void unlock(void* ptr, std::size_t /*bytes*/) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (locked_.erase(ptr) == 0) ++misuse_;
  }

  void deallocate(void* ptr, std::size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = live_.find(ptr);
    if (it == live_.end() || it->second.bytes != bytes || locked_.count(ptr) != 0) {
      ++misuse_;
      return;
    }
    freed_.push_back(it->second.serial);
    live_.erase(it);
    std::free(ptr);
  }

  void failNextAllocation() {
    std::lock_guard<std::mutex> lock(mu_);
    fail_next_ = true;
  }
  std::size_t liveCount() const {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.size();
  }
  std::size_t liveBytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t total = 0;
    for (const auto& [p, a] : live_) total += a.bytes;
    return total;
  }
  std::vector<std::uint64_t> freed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return freed_;
  }
  // Unlock of an unlocked block, free of an unknown or still-locked block, or a size mismatch.
  int misuse() const {
    std::lock_guard<std::mutex> lock(mu_);
    return misuse_;
  }

 private:
  struct Allocation {
    std::uint64_t serial;
    std::size_t bytes;
  };
  const int lock_fail_period_;
  mutable std::mutex mu_;
  std::map<void*, Allocation> live_;
  std::set<void*> locked_;
  std::vector<std::uint64_t> freed_;
  std::uint64_t serial_ = 0;
  std::uint64_t lock_calls_ = 0;
  bool fail_next_ = false;
  int misuse_ = 0;
};

}  // namespace peerreduce::testing
