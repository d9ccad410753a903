// setUpWorldProvider for builds without a GPU backend or without MPI: always the simulator.
#include <cstdio>
#include <cstdlib>

#include "world_provider.h"

namespace peerreduce::testing {

bool setUpWorldProvider(int* /*argc*/, char*** /*argv*/) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr) {
    std::fprintf(stderr,
                 "peerreduce tests: started under mpirun, but this build has no GPU backend or no MPI; "
                 "rebuild with -DPEERREDUCE_GPU=cuda (or hip) and MPI for the hardware stage\n");
    return false;
  }
  return true;
}

void tearDownWorldProvider() {}

}  // namespace peerreduce::testing
