// Where the property suites get their worlds: simulated worlds by default, or, in a GPU build run
// under mpirun, the world of the MPI processes with one GPU each and the real transport. The suites
// ask for a world of some size and configuration and do not know which they got, which is how the same
// test binaries run unchanged on the simulator and on hardware.
#pragma once

#include <cstdint>
#include <memory>

#include "peerreduce/config.h"
#include "test_world.h"

namespace peerreduce::testing {

class WorldProvider {
 public:
  virtual ~WorldProvider() = default;
  // 0 when any world size works; otherwise the only size there is (the number of MPI processes).
  virtual int fixedWorldSize() const = 0;
  virtual bool onHardware() const = 0;
  // A world of `size` ranks whose communicators use `config`. Simulated worlds are fresh each time
  // (scheduled by `sim_seed`); hardware worlds are created once per configuration and reused, since
  // creating them is collective and maps GPU memory.
  virtual StatusOr<std::shared_ptr<TestWorld>> acquire(int size, const Config& config, std::uint64_t sim_seed) = 0;
};

WorldProvider& worldProvider();
void installWorldProvider(std::unique_ptr<WorldProvider> provider);

// Chooses the provider for this process from its environment and command line: under mpirun in a
// build with a GPU backend and MPI, the hardware provider (initialising MPI); otherwise the simulator.
// Returns false and prints why if the hardware was asked for but cannot be used.
bool setUpWorldProvider(int* argc, char*** argv);
void tearDownWorldProvider();

// Several ranks as threads of this process on one GPU: PEERREDUCE_TEST_GPU_RANKS="N" (device 0) or
// "N:D" (device D). Every rank is local, so the suites' verdicts need no MPI. GPU builds only.
StatusOr<std::unique_ptr<WorldProvider>> makeGpuThreadsProvider(const char* spec);

}  // namespace peerreduce::testing
