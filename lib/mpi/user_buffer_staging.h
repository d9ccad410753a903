// Host views of an operation's user buffers, for MpiTransport's host executor.
//
// MpiTransport reduces on the host (kernels/host_reduce.h), so the user's buffers must be host memory
// while its plan runs. Host buffers are used in place. Device buffers (GPU builds) are copied into a
// pinned host block from PinnedHostPool before the plan runs and the output copied back after, both in
// order with the operation's stream: the copy waits for the kernels queued before it, and the transport
// returns only once the output is back in device memory. Buffers of one operation that overlap (NCCL's
// in-place forms: the small buffer is the rank's block of the large one) are staged as one block, so
// the plan sees the same aliasing as on the device. Only the elements the operation reads are copied
// in and only those it writes copied out (a segment of a larger call touches a range of each block).
//
// Thread safety: one thread uses a staging object at a time (the transport's executor).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "memory/pinned_host_pool.h"
#include "peerreduce/status.h"
#include "peerreduce/transport.h"

namespace peerreduce::mpi {

struct HostBuffers {
  const void* send = nullptr;
  void* recv = nullptr;
};

// The device memory operations staging needs: whether the host cannot address a pointer, a copy in
// order with a stream (either direction) and waiting for the stream. platformDeviceMemory() gives the
// build's (user_buffer_staging_{none,gpu}.cc); tests give their own.
struct DeviceMemory {
  std::function<bool(const void* ptr)> is_device;
  std::function<Status(void* dst, const void* src, std::size_t bytes, StreamHandle stream)> copy;
  std::function<Status(StreamHandle stream)> wait;
};
DeviceMemory platformDeviceMemory(int rank);

class UserBufferStaging {
 public:
  // `rank`: for messages; `pinned_limit_bytes`: the pool's limit (PEERREDUCE_PINNED_LIMIT_BYTES).
  UserBufferStaging(int rank, std::size_t pinned_limit_bytes, DeviceMemory device = {});

  // Host views of the request's buffers (null stays null). kOutOfMemory naming the pinned limit when the
  // device buffers' extent does not fit; kUnavailable naming the copy that failed.
  StatusOr<HostBuffers> stageIn(const ExecutionRequest& request, StreamHandle stream);
  // Copies the staged output back to device memory and waits for the copy (nothing for host buffers),
  // then releases the pinned block.
  Status stageOut();
  // Releases the pinned block without copying (the operation failed).
  void discard();

 private:
  struct CopyRange {
    void* device = nullptr;
    void* host = nullptr;
    std::size_t bytes = 0;
  };
  Status pool();

  int rank_;
  std::size_t pinned_limit_bytes_;
  DeviceMemory device_;
  std::unique_ptr<PinnedHostPool> pool_;
  PinnedBlock block_;
  StreamHandle stream_ = nullptr;
  std::vector<CopyRange> copy_out_;
};

// The platform's half (user_buffer_staging_{none,gpu}.cc): whether the host cannot address `ptr`, and
// copies in order with a stream. The none build has no device memory and never copies.
bool isDeviceBuffer(const void* ptr);
Status copyOnStream(void* dst, const void* src, std::size_t bytes, StreamHandle stream, int rank);
Status waitForStream(StreamHandle stream, int rank);

}  // namespace peerreduce::mpi
