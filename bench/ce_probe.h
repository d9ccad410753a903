// peerreduce-bench --ce: copy-engine rates between this machine's GPUs, one MPI process per GPU.
#pragma once

#include <mpi.h>

namespace peerreduce::bench {

// Runs the probe on every rank of `world` and prints its table on rank 0; returns the exit code.
int runCopyEngineProbe(MPI_Comm world);

}  // namespace peerreduce::bench
