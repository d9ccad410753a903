// What MpiTransport needs from the MPI library: initialisation at the thread level several transports
// need, MPI's error text, and whether MPI can read GPU memory.
//
// Several inter-machine transports of one process (one per local rank) run on different threads at
// the same time, each on its own communicator: MPI must provide MPI_THREAD_MULTIPLE. A single
// transport runs on whichever thread synchronizes it, so it needs MPI_THREAD_SERIALIZED at least.
#pragma once

#include <mpi.h>

#include <string>

#include "peerreduce/status.h"

namespace peerreduce::mpi {

// Initialises MPI with MPI_THREAD_MULTIPLE when nothing has initialised it yet (argc/argv may be null),
// then checks the level MPI provides: kUnsupported naming it when it is below MPI_THREAD_MULTIPLE
// (MPI initialised earlier by the application at a lower level, or an MPI built without threads).
Status initializeMpiForTransports(int* argc, char*** argv);

// ok when MPI is initialised (and not finalised) at a level that lets `transports` transports of this
// process run on their own threads: MPI_THREAD_MULTIPLE for more than one, MPI_THREAD_SERIALIZED for
// one. Otherwise kInvalidArgument (not initialised) or kUnsupported naming the level provided and the
// one needed.
Status checkThreadLevelFor(int transports);

// "MPI_THREAD_SINGLE", ... for messages.
const char* threadLevelName(int level);

// MPI's text for an error code.
std::string mpiErrorText(int code);

// Whether this MPI can move GPU memory itself (Open MPI's MPIX_Query_cuda_support where the library
// has it; false where MPI cannot say). Reported in the transport's log line; the transport stages GPU
// buffers through host memory either way, since it reduces on the host (docs/MULTI_MACHINE.md).
bool mpiReadsGpuMemory();

}  // namespace peerreduce::mpi
