// Where the shadow bootstrap's records travel: NCCL moves device memory only, so a record is copied into a
// small device buffer, all-gathered there by the real NCCL on a stream of the bootstrap's own, and copied
// back once the stream is done. Two kinds:
// - GPU (CUDA builds): a device buffer and a non-blocking stream on the communicator's device;
// - host: plain host memory and no stream, for a simulated world, whose NCCL is the test double that moves
//   host memory (there is no device to copy to).
//
// Thread safety: one thread at a time; bindThread() makes the device current on whichever thread runs a
// collective (the callback bootstrap runs each on a thread of its own).
#pragma once

#include <cstddef>
#include <memory>

#include "peerreduce/status.h"

namespace peerreduce::nccl {

class DeviceStaging {
 public:
  virtual ~DeviceStaging() = default;
  // Makes this staging's device current on the calling thread.
  virtual Status bindThread() = 0;
  // A send buffer of at least `send_bytes` and a receive buffer of at least `recv_bytes`, kept and grown.
  virtual Status reserve(std::size_t send_bytes, std::size_t recv_bytes) = 0;
  virtual void* sendBuffer() = 0;
  virtual void* recvBuffer() = 0;
  // The stream the real all-gather is enqueued on (null for host staging).
  virtual void* stream() = 0;
  // Copies `bytes` from host memory into the send buffer, ordered before later work on stream().
  virtual Status upload(const void* host, std::size_t bytes) = 0;
  // Whether everything enqueued on stream() has finished; never blocks.
  virtual StatusOr<bool> done() = 0;
  // Copies `bytes` of the receive buffer to host memory; only after done() said true.
  virtual Status download(void* host, std::size_t bytes) = 0;
};

// Host memory, for simulated worlds.
std::unique_ptr<DeviceStaging> createHostStaging();
// Device memory on `device` with a stream of its own; kUnsupported in builds without CUDA
// (device_staging_gpu.cc / device_staging_gpu_none.cc).
StatusOr<std::unique_ptr<DeviceStaging>> createGpuStaging(int device);

}  // namespace peerreduce::nccl
