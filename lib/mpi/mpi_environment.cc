#include "mpi/mpi_environment.h"

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

namespace peerreduce::mpi {

const char* threadLevelName(int level) {
  if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
  if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
  if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
  if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
  return "an unknown thread level";
}

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

Status initializeMpiForTransports(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = MPI_THREAD_SINGLE;
    const int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (rc != MPI_SUCCESS) return unavailableError("MPI_Init_thread failed: " + mpiErrorText(rc));
  }
  return checkThreadLevelFor(2);
}

Status checkThreadLevelFor(int transports) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    return invalidArgumentError(
        "MPI transport: MPI is not initialised (call MPI_Init_thread with MPI_THREAD_MULTIPLE, or "
        "initializeMpiForTransports, first)");
  }
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  const int needed = transports > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
  if (provided < needed) {
    return unsupportedError("MPI transport: MPI provides " + std::string(threadLevelName(provided)) + ", but " +
                            std::to_string(transports) + " transport(s) driven from their own threads need " +
                            threadLevelName(needed) +
                            "; initialise MPI with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) and an MPI "
                            "built with thread support");
  }
  return Status::ok();
}

bool mpiReadsGpuMemory() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

}  // namespace peerreduce::mpi
