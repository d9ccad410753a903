// peerreduce-p2p-probe: the raw numbers the kernels are built on, measured between two GPUs through
// IPC-mapped memory: peer read and write bandwidth with 16-byte accesses, local copy bandwidth, and the
// round-trip latency of a flag signal (ping-pong), and the write rate when the multiprocessors' stores and a
// copy engine share one transfer to the peer (one direction, then both): whether together they pass either
// alone, which decides whether a broadcast or one-shot should split its bytes between them. One process per
// GPU:
//   mpirun -np 2 peerreduce-p2p-probe
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "copy_kernel.cuh"
#include "portability.h"

namespace {

using peerreduce::bench::copyKernel;
using peerreduce::gpu::Bytes16;

constexpr std::size_t kBytes = std::size_t{256} << 20;
constexpr int kThreads = 512;
constexpr int kPings = 1000;

void check(hipError_t e, const char* what) {
  if (e != hipSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, hipGetErrorString(e));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// Rank 0 increments the peer's flag and waits for its own flag to reach the same count; rank 1 mirrors.
__global__ void pingKernel(std::uint64_t* mine, std::uint64_t* theirs, int pings, int first) {
  for (int i = 1; i <= pings; ++i) {
    if (first) {
      peerreduce::gpu::atomicAddReleaseSystem(theirs, 1);
      while (peerreduce::gpu::loadAcquireSystem(mine) < static_cast<std::uint64_t>(i)) {
      }
    } else {
      while (peerreduce::gpu::loadAcquireSystem(mine) < static_cast<std::uint64_t>(i)) {
      }
      peerreduce::gpu::atomicAddReleaseSystem(theirs, 1);
    }
  }
}

// Many blocks each increment one shared counter of the peer, as every block of a plan kernel does.
__global__ void contendKernel(std::uint64_t* theirs) {
  if (threadIdx.x == 0) {
    peerreduce::gpu::fenceReleaseSystem();
    peerreduce::gpu::atomicAddRelaxedSystem(theirs, 1);
  }
}

float timeIt(hipStream_t s, const std::function<void()>& body) {
  hipEvent_t a, b;
  check(hipEventCreate(&a), "event");
  check(hipEventCreate(&b), "event");
  body();  // warm-up
  check(hipStreamSynchronize(s), "sync");
  check(hipEventRecord(a, s), "record");
  body();
  check(hipEventRecord(b, s), "record");
  check(hipEventSynchronize(b), "sync");
  float ms = 0;
  check(hipEventElapsedTime(&ms, a, b), "elapsed");
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "run with exactly 2 processes\n");
    MPI_Finalize();
    return 2;
  }
  check(hipSetDevice(rank), "set device");
  int sms = 0;
  check(hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, rank), "attr");
  unsigned char* mine = nullptr;
  unsigned char* local = nullptr;
  check(hipMalloc(reinterpret_cast<void**>(&mine), kBytes), "malloc");
  check(hipMalloc(reinterpret_cast<void**>(&local), kBytes), "malloc");
  check(hipMemset(mine, 1, kBytes), "memset");
  check(hipMemset(local, 2, kBytes), "memset");
  hipIpcMemHandle_t handle, peer_handle;
  check(hipIpcGetMemHandle(&handle, mine), "ipc get");
  MPI_Sendrecv(&handle, sizeof(handle), MPI_BYTE, 1 - rank, 0, &peer_handle, sizeof(peer_handle), MPI_BYTE, 1 - rank, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  unsigned char* peer = nullptr;
  check(hipIpcOpenMemHandle(reinterpret_cast<void**>(&peer), peer_handle, hipIpcMemLazyEnablePeerAccess), "ipc open");
  check(hipDeviceSynchronize(), "sync");
  hipStream_t s;
  check(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), "stream");
  const std::size_t vectors = kBytes / 16;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int blocks : {sms / 4, sms, 2 * sms}) {
    const float read_ms = timeIt(s, [&] {
      copyKernel<<<blocks, kThreads, 0, s>>>(reinterpret_cast<Bytes16*>(local), reinterpret_cast<const Bytes16*>(peer),
                                             vectors);
    });
    const float write_ms = timeIt(s, [&] {
      copyKernel<<<blocks, kThreads, 0, s>>>(reinterpret_cast<Bytes16*>(peer), reinterpret_cast<const Bytes16*>(local),
                                             vectors);
    });
    const float local_ms = timeIt(s, [&] {
      copyKernel<<<blocks, kThreads, 0, s>>>(reinterpret_cast<Bytes16*>(local), reinterpret_cast<const Bytes16*>(mine),
                                             vectors);
    });
    std::printf("rank %d blocks %3d: peer read %.1f GB/s, peer write %.1f GB/s, local copy %.1f GB/s (read+write)\n",
                rank, blocks, kBytes / (read_ms * 1e6), kBytes / (write_ms * 1e6), 2.0 * kBytes / (local_ms * 1e6));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // Stores and a copy engine together: a share of the buffer by copy engine on a stream of its own, the rest by
  // every multiprocessor's stores, started together; the time until both are done. First rank 0 alone
  // writing (rank 1 idle: a broadcast's one direction), then both ranks at once (an allreduce's two).
  hipStream_t engine;
  check(hipStreamCreateWithFlags(&engine, hipStreamNonBlocking), "stream");
  hipEvent_t start, stores_done, engine_done;
  check(hipEventCreate(&start), "event");
  check(hipEventCreate(&stores_done), "event");
  check(hipEventCreate(&engine_done), "event");
  for (const bool both : {false, true}) {
    for (const std::size_t bytes : {std::size_t{16} << 20, std::size_t{64} << 20, kBytes}) {
      for (const int engine_percent : {0, 25, 40, 50, 60, 75, 100}) {
        const std::size_t engine_bytes = bytes * static_cast<std::size_t>(engine_percent) / 100 / 4096 * 4096;
        const std::size_t store_vectors = (bytes - engine_bytes) / 16;
        const bool writes = both || rank == 0;
        float best_ms = 1e30f;
        for (int round = 0; round < 5; ++round) {
          MPI_Barrier(MPI_COMM_WORLD);
          if (!writes) continue;
          check(hipEventRecord(start, s), "record");
          check(hipStreamWaitEvent(engine, start, 0), "wait");
          if (engine_bytes > 0)
            check(hipMemcpyAsync(peer, local, engine_bytes, hipMemcpyDeviceToDevice, engine), "copy");
          if (store_vectors > 0) {
            copyKernel<<<sms, kThreads, 0, s>>>(reinterpret_cast<Bytes16*>(peer + engine_bytes),
                                                reinterpret_cast<const Bytes16*>(local + engine_bytes), store_vectors);
          }
          check(hipEventRecord(engine_done, engine), "record");
          check(hipStreamWaitEvent(s, engine_done, 0), "wait");
          check(hipEventRecord(stores_done, s), "record");
          check(hipEventSynchronize(stores_done), "sync");
          float ms = 0;
          check(hipEventElapsedTime(&ms, start, stores_done), "elapsed");
          if (round > 0 && ms < best_ms) best_ms = ms;  // round 0 warms up
        }
        if (writes) {
          std::printf("rank %d %s: %4zu MiB, %3d%% by copy engine: %.1f GB/s (best of 4)\n", rank,
                      both ? "both ways" : "one way", bytes >> 20, engine_percent, bytes / (best_ms * 1e6));
        }
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  // Ping-pong through flags at the start of each region (reset first).
  auto* my_flag = reinterpret_cast<std::uint64_t*>(mine);
  auto* peer_flag = reinterpret_cast<std::uint64_t*>(peer);
  check(hipMemset(my_flag, 0, 64), "memset");
  check(hipDeviceSynchronize(), "sync");
  MPI_Barrier(MPI_COMM_WORLD);
  hipEvent_t a, b;
  check(hipEventCreate(&a), "event");
  check(hipEventCreate(&b), "event");
  check(hipEventRecord(a, s), "record");
  pingKernel<<<1, 1, 0, s>>>(my_flag, peer_flag, kPings, rank == 0);
  check(hipEventRecord(b, s), "record");
  check(hipEventSynchronize(b), "sync");
  float ms = 0;
  check(hipEventElapsedTime(&ms, a, b), "elapsed");
  std::printf("rank %d: flag ping-pong round trip %.2f us\n", rank, ms * 1000.0 / kPings);
  MPI_Barrier(MPI_COMM_WORLD);
  // Contention: sms blocks each incrementing the same remote counter once.
  check(hipMemset(my_flag, 0, 64), "memset");
  check(hipDeviceSynchronize(), "sync");
  MPI_Barrier(MPI_COMM_WORLD);
  const float contend_ms = timeIt(s, [&] { contendKernel<<<sms, kThreads, 0, s>>>(peer_flag); });
  std::printf("rank %d: %d blocks fence+increment one remote counter: %.2f us per launch\n", rank, sms,
              contend_ms * 1000.0);
  MPI_Barrier(MPI_COMM_WORLD);
  check(hipIpcCloseMemHandle(peer), "ipc close");
  MPI_Finalize();
  return 0;
}
