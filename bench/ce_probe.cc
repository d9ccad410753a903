// peerreduce-bench --ce: what the copy engines move between GPUs, the figures the copy-engine two-shot
// and the cost model's copy-engine parameters (DeviceModel::copy_engine_*) are to be checked against.
//
// Each rank allocates a source and a destination buffer, exports the destination through IPC, and opens
// every peer's. For sizes 1 MiB .. 256 MiB (x4) it times, with events, runtime copies (hipMemcpyAsync of
// device memory into a peer's device memory: the copy engines) in three patterns:
//   one-peer      rank 0 writes into rank 1, the others idle;
//   one-to-all    rank 0 writes into every peer at once, one stream per peer (nvbandwidth's
//                 one_to_all_write_ce);
//   all-to-all    every rank writes into every peer at once (the copy-engine two-shot's scatter);
// and prints per pattern and size the slowest writer's best time over the repeats and the rate: bytes
// written by one writer over that time (GB/s = 1e9 bytes/s).
#include "ce_probe.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "portability.h"

namespace peerreduce::bench {
namespace {

constexpr std::size_t kMinBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxBytes = std::size_t{256} << 20;
constexpr int kWarmup = 2;
constexpr int kRepeats = 10;

struct ProbeError {
  std::string what;
};

void gpuCall(hipError_t e, const char* what) {
  if (e != hipSuccess) throw ProbeError{std::string(what) + ": " + hipGetErrorString(e)};
}

struct Buffers {
  void* source = nullptr;
  void* destination = nullptr;
  std::vector<void*> peer_destination;  // index: rank; this rank's own is its destination
  std::vector<void*> opened;            // IPC mappings to close
};

Buffers allocate(MPI_Comm world, int rank, int size) {
  Buffers b;
  gpuCall(hipMalloc(&b.source, kMaxBytes), "hipMalloc source");
  gpuCall(hipMalloc(&b.destination, kMaxBytes), "hipMalloc destination");
  gpuCall(hipMemset(b.source, 1, kMaxBytes), "hipMemset");
  hipIpcMemHandle_t mine;
  gpuCall(hipIpcGetMemHandle(&mine, b.destination), "hipIpcGetMemHandle");
  std::vector<hipIpcMemHandle_t> all(static_cast<std::size_t>(size));
  MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all.data(), sizeof(mine), MPI_BYTE, world);
  b.peer_destination.assign(static_cast<std::size_t>(size), nullptr);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) {
      b.peer_destination[static_cast<std::size_t>(peer)] = b.destination;
      continue;
    }
    void* mapped = nullptr;
    gpuCall(hipIpcOpenMemHandle(&mapped, all[static_cast<std::size_t>(peer)], hipIpcMemLazyEnablePeerAccess),
            "hipIpcOpenMemHandle");
    b.peer_destination[static_cast<std::size_t>(peer)] = mapped;
    b.opened.push_back(mapped);
  }
  return b;
}

// One writer's copies of `bytes` into each of `targets`, each on its own stream, timed from a start
// event before all to the last stream's end; microseconds.
double timeWrites(const Buffers& b, const std::vector<int>& targets, std::size_t bytes,
                  std::vector<hipStream_t>& streams, std::vector<hipEvent_t>& ends, hipEvent_t start) {
  gpuCall(hipEventRecord(start, streams[0]), "hipEventRecord");
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (i > 0) gpuCall(hipStreamWaitEvent(streams[i], start, 0), "hipStreamWaitEvent");
    gpuCall(hipMemcpyAsync(b.peer_destination[static_cast<std::size_t>(targets[i])], b.source, bytes, hipMemcpyDefault,
                           streams[i]),
            "hipMemcpyAsync");
    gpuCall(hipEventRecord(ends[i], streams[i]), "hipEventRecord");
  }
  float longest = 0.0f;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    gpuCall(hipEventSynchronize(ends[i]), "hipEventSynchronize");
    float ms = 0.0f;
    gpuCall(hipEventElapsedTime(&ms, start, ends[i]), "hipEventElapsedTime");
    longest = std::max(longest, ms);
  }
  return static_cast<double>(longest) * 1000.0;
}

int probe(MPI_Comm world) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  if (size < 2) throw ProbeError{"--ce needs at least two ranks (one process per GPU)"};
  int devices = 0;
  gpuCall(hipGetDeviceCount(&devices), "hipGetDeviceCount");
  if (devices < 1) throw ProbeError{"no GPU is visible"};
  gpuCall(hipSetDevice(rank % devices), "hipSetDevice");
  Buffers b = allocate(world, rank, size);
  std::vector<hipStream_t> streams(static_cast<std::size_t>(size));
  std::vector<hipEvent_t> ends(static_cast<std::size_t>(size));
  hipEvent_t start;
  for (auto& s : streams) gpuCall(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), "hipStreamCreateWithFlags");
  for (auto& e : ends) gpuCall(hipEventCreate(&e), "hipEventCreate");
  gpuCall(hipEventCreate(&start), "hipEventCreate");
  std::vector<int> peers;
  for (int p = 1; p < size; ++p) peers.push_back((rank + p) % size);
  struct Pattern {
    const char* name;
    std::vector<int> targets;  // this rank's
  };
  const std::vector<Pattern> patterns = {
      {"one-peer", rank == 0 ? std::vector<int>{1} : std::vector<int>{}},
      {"one-to-all", rank == 0 ? peers : std::vector<int>{}},
      {"all-to-all", peers},
  };
  if (rank == 0) {
    std::printf("# copy engines: %d GPUs, hipMemcpyAsync into peers' device memory (IPC), best of %d\n", size,
                kRepeats);
    std::printf("%-12s %12s %8s %12s %14s %14s\n", "pattern", "bytes", "targets", "time_us", "GB/s_per_peer",
                "GB/s_writer");
  }
  for (const Pattern& pattern : patterns) {
    for (std::size_t bytes = kMinBytes; bytes <= kMaxBytes; bytes *= 4) {
      double best = 0.0;
      for (int rep = 0; rep < kWarmup + kRepeats; ++rep) {
        MPI_Barrier(world);
        const double mine = pattern.targets.empty() ? 0.0 : timeWrites(b, pattern.targets, bytes, streams, ends, start);
        double slowest = 0.0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, world);
        if (rep >= kWarmup && (best == 0.0 || slowest < best)) best = slowest;
      }
      const int targets = pattern.name == std::string("one-peer") ? 1 : size - 1;
      if (rank == 0) {
        const double per_peer = static_cast<double>(bytes) / best / 1e3;
        std::printf("%-12s %12zu %8d %12.1f %14.1f %14.1f\n", pattern.name, bytes, targets, best, per_peer,
                    per_peer * targets);
      }
    }
  }
  gpuCall(hipDeviceSynchronize(), "hipDeviceSynchronize");
  for (void* p : b.opened) gpuCall(hipIpcCloseMemHandle(p), "hipIpcCloseMemHandle");
  for (auto& s : streams) gpuCall(hipStreamDestroy(s), "hipStreamDestroy");
  for (auto& e : ends) gpuCall(hipEventDestroy(e), "hipEventDestroy");
  gpuCall(hipEventDestroy(start), "hipEventDestroy");
  MPI_Barrier(world);  // no peer closes a mapping of a buffer that is freed while it still writes
  gpuCall(hipFree(b.source), "hipFree");
  gpuCall(hipFree(b.destination), "hipFree");
  return 0;
}

}  // namespace

int runCopyEngineProbe(MPI_Comm world) {
  try {
    return probe(world);
  } catch (const ProbeError& e) {
    int rank = 0;
    MPI_Comm_rank(world, &rank);
    std::fprintf(stderr, "peerreduce-bench --ce rank %d: %s\n", rank, e.what.c_str());
    MPI_Abort(world, 1);
    return 1;
  }
}

}  // namespace peerreduce::bench
