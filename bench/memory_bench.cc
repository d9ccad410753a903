// The symmetric pool's speed and its fragmentation under a long random workload. A benchmark, not a
// test: run it from a release build.
//   build/release/bench/peerreduce-memory-bench
// - poolAllocateFree: steady-state throughput of release + allocate pairs with random sizes
//   (log-uniform 64 B .. 64 KiB) and random victims, at 64 and 1024 live blocks; counter ops/s.
// - poolLongWorkload: 1e6 seeded operations (allocate while under 75% occupancy, else release a random
//   block; 70% or 100% scratch, the rest user buffers; log-uniform 1 KiB .. 1 MiB in a 256 MiB pool),
//   with no compaction, a defragment() every 10000 operations, or automatic compaction at
//   fragmentation 0.5.
//   Counters: fragmentation, largest free block and free blocks at the end; mean fragmentation and the
//   smallest largest-free-block over samples every 1000 operations (after the first 10%); failed
//   allocations, compaction passes and blocks moved. Every run is the same sequence (seed 42), so the figures are
//   comparable.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "memory/symmetric_pool.h"
#include "prng.h"

namespace peerreduce {
namespace {

constexpr std::uint64_t kSeed = 42;  // any fixed value: the workload must be the same in every run
// Draws enough operations ahead that the PRNG is not what is measured; a power of two for masking.
constexpr std::size_t kPrecomputed = std::size_t{1} << 16;

// Log-uniform in [low, high]: small blocks are common, large ones rare, as with real scratch and flags.
std::size_t logUniform(sim::Prng& prng, std::size_t low, std::size_t high) {
  const double l = std::log2(static_cast<double>(low));
  const double h = std::log2(static_cast<double>(high));
  return static_cast<std::size_t>(std::exp2(l + (h - l) * prng.unit()));
}

SymmetricPoolOptions benchOptions(std::size_t capacity, double threshold) {
  SymmetricPoolOptions o;
  o.capacity_bytes = capacity;
  o.default_alignment_bytes = kDefaultPoolAlignmentBytes;
  o.defrag_threshold = threshold;
  o.max_blocks = kDefaultPoolMaxBlocks;
  return o;
}

void poolAllocateFree(benchmark::State& state) {
  const auto live_target = static_cast<std::size_t>(state.range(0));
  auto pool = SymmetricPool::create(benchOptions(std::size_t{256} << 20, 1.0));
  if (!pool.isOk()) {
    state.SkipWithError(pool.status().toString().c_str());
    return;
  }
  sim::Prng prng(kSeed);
  std::vector<std::size_t> sizes(kPrecomputed);
  std::vector<std::size_t> victims(kPrecomputed);
  for (std::size_t i = 0; i < kPrecomputed; ++i) {
    sizes[i] = logUniform(prng, 64, 64 << 10);
    victims[i] = static_cast<std::size_t>(prng.below(live_target));
  }
  std::vector<PoolBlock> live;
  live.reserve(live_target);
  for (std::size_t i = 0; i < live_target; ++i) live.push_back(*pool->allocate(sizes[i], BlockKind::kScratch));
  std::size_t i = 0;
  std::uint64_t failures = 0;
  for (auto _ : state) {
    const std::size_t k = i++ & (kPrecomputed - 1);
    PoolBlock& slot = live[victims[k]];
    slot.reset();
    auto block = pool->allocate(sizes[k], BlockKind::kScratch);
    if (block.isOk()) {
      slot = std::move(*block);
    } else {
      ++failures;
    }
  }
  state.counters["ops/s"] =
      benchmark::Counter(2.0 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["failures"] = static_cast<double>(failures);
  state.counters["free_blocks"] = static_cast<double>(pool->stats().free_blocks);
}

BENCHMARK(poolAllocateFree)->ArgName("live_blocks")->Arg(64)->Arg(1024);

enum class Compaction : int { kNone = 0, kPeriodic = 1, kAutomatic = 2 };

void poolLongWorkload(benchmark::State& state) {
  constexpr std::size_t kOperations = 1000000;
  constexpr std::size_t kPeriod = 10000;  // operations between explicit defragment() calls
  constexpr std::size_t kCapacity = std::size_t{256} << 20;
  constexpr std::size_t kTargetInUse = kCapacity / 4 * 3;  // 75%: busy, with room to fragment
  constexpr double kAutomaticThreshold = 0.5;
  const auto mode = static_cast<Compaction>(state.range(0));
  const double scratch_share = static_cast<double>(state.range(1)) / 100.0;
  constexpr std::size_t kSamplePeriod = 1000;  // operations between samples of the statistics
  PoolStats final_stats;
  double fragmentation_sum = 0.0;
  std::size_t samples = 0;
  std::size_t min_largest_free = kCapacity;
  for (auto _ : state) {
    auto pool =
        SymmetricPool::create(benchOptions(kCapacity, mode == Compaction::kAutomatic ? kAutomaticThreshold : 1.0));
    if (!pool.isOk()) {
      state.SkipWithError(pool.status().toString().c_str());
      return;
    }
    sim::Prng prng(kSeed);
    std::vector<PoolBlock> live;
    live.reserve(kDefaultPoolMaxBlocks);
    fragmentation_sum = 0.0;
    samples = 0;
    min_largest_free = kCapacity;
    for (std::size_t op = 0; op < kOperations; ++op) {
      if (op % kSamplePeriod == 0 && op >= kOperations / 10) {  // after the first 10%: the pool has filled
        const PoolStats now = pool->stats();
        fragmentation_sum += now.fragmentation;
        ++samples;
        min_largest_free = std::min<std::size_t>(min_largest_free, now.largest_free_block_bytes);
      }
      const bool allocate = pool->stats().bytes_in_use < kTargetInUse && live.size() < kDefaultPoolMaxBlocks;
      if (allocate || live.empty()) {
        const std::size_t bytes = logUniform(prng, 1 << 10, 1 << 20);
        const BlockKind kind = prng.chance(scratch_share) ? BlockKind::kScratch : BlockKind::kUserBuffer;
        auto block = pool->allocate(bytes, kind);
        if (block.isOk()) live.push_back(std::move(*block));
      } else {
        const auto victim = static_cast<std::size_t>(prng.below(live.size()));
        live[victim] = std::move(live.back());
        live.pop_back();
      }
      if (mode == Compaction::kPeriodic && (op + 1) % kPeriod == 0) benchmark::DoNotOptimize(pool->defragment());
    }
    final_stats = pool->stats();
  }
  state.counters["fragmentation"] = final_stats.fragmentation;
  state.counters["mean_fragmentation"] = fragmentation_sum / static_cast<double>(samples);
  state.counters["min_largest_free_MiB"] = static_cast<double>(min_largest_free) / (1 << 20);
  state.counters["largest_free_MiB"] = static_cast<double>(final_stats.largest_free_block_bytes) / (1 << 20);
  state.counters["free_MiB"] = static_cast<double>(final_stats.capacity_bytes - final_stats.bytes_in_use) / (1 << 20);
  state.counters["free_blocks"] = static_cast<double>(final_stats.free_blocks);
  state.counters["failed_allocs"] = static_cast<double>(final_stats.failed_allocations);
  state.counters["defrag_passes"] = static_cast<double>(final_stats.defragmentations);
  state.counters["blocks_moved"] = static_cast<double>(final_stats.blocks_moved);
  state.counters["ops/s"] = benchmark::Counter(
      static_cast<double>(kOperations) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(mode == Compaction::kNone       ? "no compaction"
                 : mode == Compaction::kPeriodic ? "defragment() every 10000 ops"
                                                 : "automatic at fragmentation 0.5");
}

BENCHMARK(poolLongWorkload)
    ->ArgNames({"compaction", "scratch_pct"})
    ->ArgsProduct({{static_cast<int>(Compaction::kNone), static_cast<int>(Compaction::kPeriodic),
                    static_cast<int>(Compaction::kAutomatic)},
                   {70, 100}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace peerreduce

BENCHMARK_MAIN();
