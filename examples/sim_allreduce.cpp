// A sum allreduce of fp32 over a simulated world of 4 ranks, one thread per rank, with the C++ API.
// Every rank contributes rank + 1 in every element, so every element of the result must be 1+2+3+4.
#include <cstdio>
#include <thread>
#include <vector>

#include "peerreduce/communicator.h"
#include "peerreduce/simulator.h"

namespace {

constexpr int kRanks = 4;
constexpr std::size_t kCount = 1024;

// One rank's whole life: create (collective), allreduce, synchronize (collective on the simulator).
peerreduce::Status runRank(peerreduce::sim::SimWorld& world, int rank, std::vector<float>& data) {
  PR_ASSIGN_OR_RETURN(auto comm,
                      peerreduce::Communicator::create(rank, kRanks, world.bootstrap(rank), world.transport(rank)));
  PR_RETURN_IF_ERROR(comm->allreduce(data.data(), data.data(), data.size(), peerreduce::DataType::kFloat32,
                                     peerreduce::ReduceOp::kSum));
  return comm->synchronize();
}

}  // namespace

int main() {
  peerreduce::sim::SimOptions options;
  options.seed = 7;  // the scheduler's seed: the same seed replays the same interleaving
  auto world = peerreduce::sim::SimWorld::create(kRanks, options);
  if (!world.isOk()) {
    std::fprintf(stderr, "creating the simulated world failed: %s\n", world.status().toString().c_str());
    return 1;
  }
  std::vector<std::vector<float>> data(kRanks);
  std::vector<peerreduce::Status> results(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    data[r].assign(kCount, static_cast<float>(r + 1));
    threads.emplace_back([&, r] { results[r] = runRank(**world, r, data[r]); });
  }
  for (auto& t : threads) t.join();

  const float expected = kRanks * (kRanks + 1) / 2.0f;
  int wrong = 0;
  for (int r = 0; r < kRanks; ++r) {
    if (!results[r].isOk()) {
      std::fprintf(stderr, "rank %d: %s\n", r, results[r].toString().c_str());
      return 1;
    }
    for (float value : data[r]) wrong += value != expected ? 1 : 0;
  }
  std::printf("allreduce of %zu fp32 over %d simulated ranks: element 0 = %g (expected %g), %d wrong\n", kCount, kRanks,
              static_cast<double>(data[0][0]), static_cast<double>(expected), wrong);
  return wrong == 0 ? 0 : 1;
}
