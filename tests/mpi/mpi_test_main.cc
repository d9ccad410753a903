// main() of the tests run under mpirun: MPI at MPI_THREAD_MULTIPLE, the same RapidCheck seed on every
// process (machine 0 draws it, or RC_PARAMS gives it),.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mpi/mpi_environment.h"

int main(int argc, char** argv) {
  const peerreduce::Status ready = peerreduce::mpi::initializeMpiForTransports(&argc, &argv);
  if (!ready.isOk()) {
    std::fprintf(stderr, "%s\n", ready.toString().c_str());
    return 1;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // RapidCheck draws from its seed: every machine must draw the same cases.
  std::string params = std::getenv("RC_PARAMS") != nullptr ? std::getenv("RC_PARAMS") : "";
  unsigned long long seed =
      static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
  MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  if (params.find("seed=") == std::string::npos) {
    params += " seed=" + std::to_string(seed % 1000000007ULL);
    setenv("RC_PARAMS", params.c_str(), 1);
  }
  ::testing::InitGoogleTest(&argc, argv);
  const int failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed;
}
