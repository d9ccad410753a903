// The allreduce path allocates nothing (DESIGN.md, "Memory"): pool allocate, release, handle copies
// and automatic compaction must not touch the heap. This binary counts global operator new calls.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "memory/symmetric_pool.h"

namespace {
std::atomic<long> g_heap_allocations{0};
}  // namespace

// Counting replacements of the global allocation functions (malloc underneath, so ASan still checks).
void* operator new(std::size_t bytes) {
  g_heap_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t bytes) { return operator new(bytes); }
// The nothrow forms too: their memory is freed by the replaced operator delete below, so leaving them to
// the runtime would pair its allocation with our free (the simulator's regions use new (std::nothrow)).
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  g_heap_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(bytes == 0 ? 1 : bytes);
}
void* operator new[](std::size_t bytes, const std::nothrow_t& tag) noexcept { return operator new(bytes, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace peerreduce::testing {
namespace {

TEST(SymmetricPoolHotPath, AllocateReleaseCopyAndCompactionDoNotTouchTheHeap) {
  SymmetricPoolOptions o;
  o.capacity_bytes = std::size_t{1} << 20;
  o.region_granularity_bytes = 4096;
  o.max_blocks = 64;
  o.defrag_threshold = 0.1;  // compaction runs often below
  SymmetricPool pool = SymmetricPool::create(o).value();
  std::vector<PoolBlock> live;
  live.reserve(64);
  std::size_t state = 12345;
  const long before = g_heap_allocations.load();
  for (int i = 0; i < 20000; ++i) {  // a fixed pseudo-random mix of allocations and releases
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const std::size_t pick = state >> 33;
    if (live.size() < 48 && pick % 3 != 0) {
      const BlockKind kind = pick % 5 == 0 ? BlockKind::kFlags : BlockKind::kScratch;
      auto block = pool.allocateBestEffort(64 + pick % 16384, 64, kind, std::size_t{16} << (pick % 6));
      if (block.isOk()) live.push_back(std::move(*block));
    } else if (!live.empty()) {
      const std::size_t victim = pick % live.size();
      if (pick % 7 == 0) {
        PoolBlock lease = live[victim];  // a copy pins it for a moment
        live[victim] = lease;
      }
      live[victim] = std::move(live.back());
      live.pop_back();
    }
  }
  const long during = g_heap_allocations.load() - before;
  live.clear();
  EXPECT_EQ(during, 0) << "heap allocations on the pool's hot path";
  EXPECT_EQ(pool.stats().failed_allocations, 0u);  // error messages would allocate
  EXPECT_GT(pool.stats().defragmentations, 0u);
  EXPECT_GT(pool.stats().allocations, 1000u);
}

}  // namespace
}  // namespace peerreduce::testing
