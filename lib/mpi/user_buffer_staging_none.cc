// A build without a GPU platform: every buffer is host memory, so nothing is ever staged.
#include <string>

#include "mpi/user_buffer_staging.h"

namespace peerreduce::mpi {

bool isDeviceBuffer(const void* /*ptr*/) { return false; }

Status copyOnStream(void* /*dst*/, const void* /*src*/, std::size_t /*bytes*/, StreamHandle /*stream*/, int rank) {
  return internalError("MPI transport rank " + std::to_string(rank) + ": a device copy in a build without a GPU");
}

Status waitForStream(StreamHandle /*stream*/, int /*rank*/) { return Status::ok(); }

}  // namespace peerreduce::mpi
