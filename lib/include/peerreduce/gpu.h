// The GPU transport: plans executed by kernels over peer-to-peer device memory.
//
// One Transport per rank; each rank drives one GPU. Ranks may be threads of one process (several GPUs
// driven by one process, peer access enabled directly) or separate processes (one per GPU, memory
// shared through IPC handles exchanged by the Bootstrap). Before it trusts a peer mapping it reads a
// token the peer wrote into its own memory through that mapping (the access probe).
//
// Streams: allreduce(..., stream) takes a hipStream_t / cudaStream_t, any number of them. A
// communicator's operations run in their order of call, whatever stream each is on (NCCL's rule): the
// transport makes an operation's stream wait for the previous operation when that ran on another
// stream. Graph capture works: all synchronisation state lives in device memory and advances inside the
// kernel; each capture's operations get a signal area and scratch of their own (a channel,
// peerreduce/transport.h), so a graph may replay beside eager operations on another stream.
//
// Built only when PEERREDUCE_GPU is hip or cuda; otherwise createGpuTransport returns kUnsupported.
//
// Example (one process per GPU under mpirun):
//   auto bootstrap = peerreduce::createMpiBootstrap(MPI_COMM_WORLD).value();
//   auto transport = peerreduce::createGpuTransport(rank, size).value();
//   auto comm = peerreduce::Communicator::create(rank, size, bootstrap, transport).value();
#pragma once

#include <memory>

#include "peerreduce/status.h"
#include "peerreduce/transport.h"

namespace peerreduce {

struct GpuTransportOptions {
  // Device ordinal to use; -1 picks local_rank % (number of visible devices).
  int device = -1;
  // This rank's position among the ranks of its machine (peerreduce's C API finds it through the
  // bootstrap); -1 means the rank itself, right when every rank of the world is on one machine.
  int local_rank = -1;
  // Most blocks a kernel uses; 0 = the multiprocessor count. Ranks agree on the smallest. The push
  // two-shot (large operations) uses up to all of them, the other kernels at most 32.
  // PEERREDUCE_GPU_MAX_BLOCKS overrides it (for measurements).
  int max_blocks = 0;
};

StatusOr<std::shared_ptr<Transport>> createGpuTransport(int rank, int world_size,
                                                        const GpuTransportOptions& options = {});

// The device a communicator of the C API or the Python package uses (Config::device): `requested` when it
// is an ordinal (checked against the visible devices), the calling thread's current device for
// kDeviceCurrent, `local_rank` modulo the visible devices for kDeviceOfLocalRank. kUnsupported without a
// GPU backend; kInvalidArgument naming the value otherwise.
StatusOr<int> resolveGpuDevice(int requested, int local_rank, int rank);

// "cuda", "hip" or "none": the GPU platform this build of peerreduce targets.
const char* gpuPlatformName();

}  // namespace peerreduce
