// How fast the simulator runs allreduces: simulated operations per second of host time, for the
// sizes the design names (8 ranks x 4 KiB and 8 ranks x 16 MiB, fp32 sum), with and without the
// happens-before checker. A benchmark, not a test: run it from a release build.
//   build/release/bench/peerreduce-sim-bench
#include <benchmark/benchmark.h>

#include <vector>

#include "sim_cluster.h"

namespace peerreduce::sim {
namespace {

constexpr int kRanks = 8;

void simulatedAllreduce(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  const bool race_checking = state.range(1) != 0;
  const std::size_t count = bytes / sizeof(float);
  SimOptions options;
  options.race_checking = race_checking;
  auto cluster = SimCluster::create(kRanks, options, Config{});
  if (!cluster.isOk()) {
    state.SkipWithError(cluster.status().toString().c_str());
    return;
  }
  std::vector<std::vector<float>> send(kRanks, std::vector<float>(count, 1.0f));
  std::vector<std::vector<float>> recv(kRanks, std::vector<float>(count, 0.0f));
  for (auto _ : state) {
    for (int r = 0; r < kRanks; ++r) {
      const Status s = (*cluster)->comm(r).allreduce(send[static_cast<std::size_t>(r)].data(),
                                                     recv[static_cast<std::size_t>(r)].data(), count,
                                                     DataType::kFloat32, ReduceOp::kSum);
      if (!s.isOk()) state.SkipWithError(s.toString().c_str());
    }
    const Status s = (*cluster)->runUntilIdle();
    if (!s.isOk()) state.SkipWithError(s.toString().c_str());
    (*cluster)->world().resetStats();  // keeps the race checker's reports and trace from growing
  }
  if (recv[0][0] != static_cast<float>(kRanks)) state.SkipWithError("wrong result");
  state.counters["allreduces/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["simulated_bytes/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(bytes) * kRanks,
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
  state.SetLabel(std::string(algorithmName((*cluster)->comm(0).explainSelection(count, DataType::kFloat32)->chosen)));
}

BENCHMARK(simulatedAllreduce)
    ->ArgNames({"bytes", "race_check"})
    ->Args({4 << 10, 1})
    ->Args({4 << 10, 0})
    ->Args({16 << 20, 1})
    ->Args({16 << 20, 0})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace peerreduce::sim

BENCHMARK_MAIN();
