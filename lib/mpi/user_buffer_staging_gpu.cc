// A GPU build: device buffers are recognised by the runtime and copied in order with the operation's
// stream (hipMemcpyDefault: the runtime knows which side each pointer is on).
#include <string>

#include "mpi/user_buffer_staging.h"
#include "portability.h"

namespace peerreduce::mpi {

bool isDeviceBuffer(const void* ptr) { return isDeviceMemory(ptr); }

Status copyOnStream(void* dst, const void* src, std::size_t bytes, StreamHandle stream, int rank) {
  const hipError_t rc = hipMemcpyAsync(dst, src, bytes, hipMemcpyDefault, static_cast<hipStream_t>(stream));
  if (rc == hipSuccess) return Status::ok();
  return unavailableError("MPI transport rank " + std::to_string(rank) + ": staging copy of " + std::to_string(bytes) +
                          " bytes failed: " + hipGetErrorString(rc));
}

Status waitForStream(StreamHandle stream, int rank) {
  const hipError_t rc = hipStreamSynchronize(static_cast<hipStream_t>(stream));
  if (rc == hipSuccess) return Status::ok();
  return unavailableError("MPI transport rank " + std::to_string(rank) +
                          ": waiting for the staging copies failed: " + hipGetErrorString(rc));
}

}  // namespace peerreduce::mpi
