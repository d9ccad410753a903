// Run under mpirun with MPI initialised at MPI_THREAD_SERIALIZED: several inter-machine transports on
// their own threads need MPI_THREAD_MULTIPLE, so creating two is refused with kUnsupported naming both
// levels, and creating one is allowed. Exits 0 when both hold.
#include <mpi.h>

#include <cstdio>
#include <string>

#include "mpi/mpi_environment.h"
#include "mpi/mpi_transport.h"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int failures = 0;
  if (provided >= MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "MPI gave MPI_THREAD_MULTIPLE when asked for less: the refusal cannot be shown\n");
    failures += 1;
  }
  const auto two = peerreduce::mpi::createMpiTransports(MPI_COMM_WORLD, 2);
  const std::string message = two.status().toString();
  if (two.status().code() != peerreduce::ErrorCode::kUnsupported ||
      message.find("MPI_THREAD_SERIALIZED") == std::string::npos ||
      message.find("MPI_THREAD_MULTIPLE") == std::string::npos) {
    std::fprintf(stderr, "two transports at MPI_THREAD_SERIALIZED: expected kUnsupported naming both levels, got %s\n",
                 message.c_str());
    failures += 1;
  }
  const auto one = peerreduce::mpi::createMpiTransports(MPI_COMM_WORLD, 1);
  if (!one.isOk()) {
    std::fprintf(stderr, "one transport at MPI_THREAD_SERIALIZED: %s\n", one.status().toString().c_str());
    failures += 1;
  }
  // The same refusal from the initialisation helper, which cannot raise the level MPI already has.
  const auto again = peerreduce::mpi::initializeMpiForTransports(&argc, &argv);
  if (again.code() != peerreduce::ErrorCode::kUnsupported) {
    std::fprintf(stderr, "initializeMpiForTransports after a lower MPI_Init_thread: %s\n", again.toString().c_str());
    failures += 1;
  }
  MPI_Finalize();
  if (failures == 0) std::printf("thread levels checked\n");
  return failures == 0 ? 0 : 1;
}
