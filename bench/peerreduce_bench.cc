// peerreduce-bench: collective time and bandwidth against NCCL, on the same GPUs, buffers and run.
//
// --coll allreduce (default) | reduce-scatter | all-gather | broadcast [--root R]. nccl-tests
// conventions (bench/collective_units.h): the size column is allreduce's and broadcast's buffer,
// reduce-scatter's send buffer and all-gather's receive buffer; algbw = size / time, busbw = algbw x
// 2(n-1)/n (allreduce), (n-1)/n (reduce-scatter, all-gather) or 1 (broadcast); out-of-place and in-place
// (NCCL's aliasing); a #wrong count per size from a real check. Timing: a CUDA/HIP graph of --iters
// operations is captured once per size and library, replayed --repeats times after warm-up; each
// replay is timed with events on every rank, the slowest rank's time counts, and best and median over
// the replays are reported. Run one process per GPU:
//   mpirun -np 4 peerreduce-bench --coll reduce-scatter --nccl /path/to/libnccl.so.2 --json out.json --csv out.csv
// With --batch N (allreduce only) it measures batches instead: N tensors of each size (up to
// --batch-max-bytes each) reduced by one allreduceBatch ("batch-N"), by N separate allreduce calls
// ("separate-N") and by NCCL's N calls inside one ncclGroupStart/End ("group-N"); bytes are the N
// tensors together.
// PEERREDUCE_* variables apply (--algo wins over PEERREDUCE_ALGO or the collective's own
// PEERREDUCE_ALGO_*, --link-mask over PEERREDUCE_LINK_MASK), so host-staged links run with their usual
// table: --link-mask host:all (every link through pinned host memory; the pinned pool's traffic is
// printed). --nccl-p2p-disable runs NCCL beside it with NCCL_P2P_DISABLE=1, so both libraries move data
// through the host. The command line is bench/bench_options.h, the outputs bench/bench_report.h. The
// "blocks" column is the GPU blocks of peerreduce's kernel for the size (explainSelection's
// kernel_blocks): how many multiprocessors the operation keeps busy. --ce runs the copy-engine probe
// (ce_probe.cc) instead and exits. --skew-us N starts every rank but 0 N us late in each timed replay
// (a skewed arrival, as applications have): the first operation absorbs it, and the rest must not slow.
// --eager times --iters calls launched back to back instead of a graph's replay (each timing then
// includes the host's cost of every call, as an application's eager loop and nccl-tests see it).
// --machines M (with --eager) times a MultiMachineCommunicator over M machines of the world's ranks in
// order (bench/machine_world.h), each machine strategy a row ("machines-hierarchical", "machines-flat";
// broadcast has one way, "machines"), beside NCCL over the same GPUs.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench_options.h"
#include "bench_report.h"
#include "ce_probe.h"
#include "collective_call.h"
#include "collective_units.h"
#include "machine_call.h"
#include "machine_world.h"
#include "nccl_loader.h"
#include "peerreduce/communicator.h"
#include "peerreduce/gpu.h"
#include "peerreduce/mpi_bootstrap.h"
#include "portability.h"

namespace peerreduce::bench {
namespace {

int g_rank = 0;
int g_size = 1;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "peerreduce-bench rank %d: %s\n", g_rank, what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void check(const Status& s, const char* what) {
  if (!s.isOk()) die(std::string(what) + ": " + s.toString());
}

void gpu(hipError_t e, const char* what) {
  if (e != hipSuccess) die(std::string(what) + ": " + hipGetErrorString(e));
}

using Launch = std::function<Status(const void*, void*, std::size_t, hipStream_t)>;

// Busy-waits `us` microseconds on the host (a sleep would add the scheduler's wake-up latency).
void spinHostUs(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// `repeats` timings of what `enqueue` puts on `stream` (`iters` operations), each after a barrier (and
// --skew-us on every rank but 0), timed with events; per operation, the slowest rank's time counts.
Timing timeRuns(const Options& o, hipStream_t stream, const std::function<void()>& enqueue) {
  hipEvent_t start, stop;
  gpu(hipEventCreate(&start), "event");
  gpu(hipEventCreate(&stop), "event");
  std::vector<double> times;
  for (int r = 0; r < o.repeats; ++r) {
    gpu(hipStreamSynchronize(stream), "sync");
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank != 0) spinHostUs(o.skew_us);
    gpu(hipEventRecord(start, stream), "record");
    enqueue();
    gpu(hipEventRecord(stop, stream), "record");
    gpu(hipEventSynchronize(stop), "sync");
    float ms = 0;
    gpu(hipEventElapsedTime(&ms, start, stop), "elapsed");
    double mine = static_cast<double>(ms) * 1000.0 / o.iters;
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(slowest);
  }
  gpu(hipEventDestroy(start), "event");
  gpu(hipEventDestroy(stop), "event");
  std::sort(times.begin(), times.end());
  return Timing{times.front(), times[times.size() / 2]};
}

// Captures `iters` launches into a graph and times `repeats` replays.
Timing timeGraph(const Launch& launch, const void* send, void* recv, std::size_t count, const Options& o,
                 hipStream_t stream) {
  hipGraph_t graph;
  hipGraphExec_t exec;
  gpu(hipStreamBeginCapture(stream, hipStreamCaptureModeThreadLocal), "begin capture");
  for (int i = 0; i < o.iters; ++i) check(launch(send, recv, count, stream), "launch during capture");
  gpu(hipStreamEndCapture(stream, &graph), "end capture");
  gpu(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0), "instantiate");
  gpu(hipGraphLaunch(exec, stream), "warm-up replay");
  const Timing timing = timeRuns(o, stream, [&] { gpu(hipGraphLaunch(exec, stream), "replay"); });
  gpu(hipGraphExecDestroy(exec), "destroy exec");
  gpu(hipGraphDestroy(graph), "destroy graph");
  return timing;
}

// --eager: `repeats` runs of `iters` calls launched back to back (the host's cost of each call included, as
// in an application's eager loop and in nccl-tests).
Timing timeEager(const Launch& launch, const void* send, void* recv, std::size_t count, const Options& o,
                 hipStream_t stream) {
  return timeRuns(o, stream, [&] {
    for (int i = 0; i < o.iters; ++i) check(launch(send, recv, count, stream), "eager launch");
  });
}

// The collective of `bytes` (nccl-tests' size) in place or out of place, on buffers laid out in the two
// allocations as the collective's placement says: first checked (every element of the receive buffer
// against the expected value, summed over ranks), then timed.
Row measure(const std::string& library, const std::string& algorithm, const Launch& launch, std::size_t bytes,
            bool in_place, const Options& o, void* send_allocation, void* recv_allocation, hipStream_t stream) {
  const std::size_t elem = dataTypeSize(o.dtype);
  const std::size_t count = countForBytes(o.collective, bytes, g_size, elem);
  const Placement p = placementOf(o.collective, in_place, g_rank, g_size, count, elem);
  auto at = [&](Allocation a, std::size_t offset) {
    return static_cast<unsigned char*>(a == Allocation::kSend ? send_allocation : recv_allocation) + offset;
  };
  void* send = at(p.send_in, p.send_offset);
  void* recv = at(p.recv_in, p.recv_offset);
  Row row;
  row.library = library;
  row.algorithm = algorithm;
  row.collective = o.collective;
  row.bytes = reportedBytes(o.collective, count, g_size, elem);
  row.in_place = in_place;
  // Correctness: the receive buffer poisoned (NaN for every benchmarked type: unwritten elements show), a fresh
  // input where the collective reads one (over the poison where in place), one call, every element
  // compared.
  gpu(hipMemset(recv, 0xff, p.recv_elems * elem), "poison");
  if (readsInput(o.collective, g_rank, o.root)) {
    const std::vector<unsigned char> input = encodeInput(o.dtype, g_rank, g_size, p.send_elems);
    gpu(hipMemcpy(send, input.data(), input.size(), hipMemcpyHostToDevice), "upload");
  }
  // The copy and the memset run on the legacy default stream and may still be in flight.
  gpu(hipDeviceSynchronize(), "settle uploads");
  const std::string call(collectiveName(o.collective));
  check(launch(send, recv, count, stream), call.c_str());
  gpu(hipStreamSynchronize(stream), "sync");
  std::vector<unsigned char> result(p.recv_elems * elem);
  gpu(hipMemcpy(result.data(), recv, result.size(), hipMemcpyDeviceToHost), "download");
  long long wrong = countWrong(result, o.dtype, o.collective, g_rank, g_size, o.root, count);
  MPI_Allreduce(&wrong, &row.wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (int w = 0; w < o.warmup; ++w) check(launch(send, recv, count, stream), "warm-up");
  gpu(hipStreamSynchronize(stream), "sync");
  row.time =
      o.eager ? timeEager(launch, send, recv, count, o, stream) : timeGraph(launch, send, recv, count, o, stream);
  setBandwidths(row, g_size);
  return row;
}

// Batches of o.batch tensors of each size: one allreduceBatch, separate allreduce calls, and NCCL's
// grouped calls, all on the same buffers (tensor t is elements [t * count, (t + 1) * count)).
void measureBatches(Communicator& comm, const Nccl* nccl, NcclComm nccl_comm, const Options& o, void* send, void* recv,
                    hipStream_t stream, std::vector<Row>& rows) {
  const auto n = static_cast<std::size_t>(o.batch);
  const std::size_t elem = dataTypeSize(o.dtype);
  const std::string suffix = "-" + std::to_string(o.batch);
  const Launch batched = [&](const void* s, void* r, std::size_t total, hipStream_t st) {
    const std::size_t each = total / n;
    std::vector<BatchItem> items;
    for (std::size_t t = 0; t < n; ++t) {
      items.push_back(BatchItem{static_cast<const unsigned char*>(s) + t * each * elem,
                                static_cast<unsigned char*>(r) + t * each * elem, each});
    }
    return comm.allreduceBatch(items, o.dtype, ReduceOp::kSum, st);
  };
  const Launch separate = [&](const void* s, void* r, std::size_t total, hipStream_t st) {
    const std::size_t each = total / n;
    for (std::size_t t = 0; t < n; ++t) {
      PR_RETURN_IF_ERROR(comm.allreduce(static_cast<const unsigned char*>(s) + t * each * elem,
                                        static_cast<unsigned char*>(r) + t * each * elem, each, o.dtype, ReduceOp::kSum,
                                        st));
    }
    return Status::ok();
  };
  const int nccl_dtype = ncclDataTypeOf(o.dtype);
  const Launch grouped = [&](const void* s, void* r, std::size_t total, hipStream_t st) {
    const std::size_t each = total / n;
    PR_RETURN_IF_ERROR(nccl->groupStart());
    for (std::size_t t = 0; t < n; ++t) {
      PR_RETURN_IF_ERROR(nccl->allReduce(static_cast<const unsigned char*>(s) + t * each * elem,
                                         static_cast<unsigned char*>(r) + t * each * elem, each, nccl_dtype, kNcclSum,
                                         nccl_comm, st));
    }
    return nccl->groupEnd();
  };
  for (std::size_t bytes = o.min_bytes; bytes <= o.batch_max_bytes && bytes * n <= o.max_bytes;
       bytes *= static_cast<std::size_t>(o.step_factor)) {
    const std::size_t total = bytes * n;
    rows.push_back(measure("peerreduce", "batch" + suffix, batched, total, false, o, send, recv, stream));
    rows.push_back(measure("peerreduce", "separate" + suffix, separate, total, false, o, send, recv, stream));
    if (nccl != nullptr)
      rows.push_back(measure("nccl", "group" + suffix, grouped, total, false, o, send, recv, stream));
    for (std::size_t k = rows.size() - (nccl != nullptr ? 3 : 2); k < rows.size(); ++k) rows[k].batch = o.batch;
  }
}

}  // namespace
}  // namespace peerreduce::bench

int main(int argc, char** argv) {
  using namespace peerreduce;
  using namespace peerreduce::bench;
  // The communicator across machines (--machines) runs MPI transports on its own threads.
  int thread_level = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &thread_level);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  auto parsed = parseOptions(argc, argv, g_size);
  check(parsed.status(), "command line");
  const Options o = *parsed;
  const std::size_t elem = dataTypeSize(o.dtype);
  if (o.ce_probe) {
    const int code = runCopyEngineProbe(MPI_COMM_WORLD);
    MPI_Finalize();
    return code;
  }
  hipStream_t stream;
  int devices = 0;
  gpu(hipGetDeviceCount(&devices), "device count");
  gpu(hipSetDevice(g_rank % devices), "set device");
  gpu(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "stream");
  // Every collective's buffers fit in two allocations of the largest reported size (reduce-scatter's
  // receive buffer and all-gather's send buffer are 1/n of it).
  void* send = nullptr;
  void* recv = nullptr;
  gpu(hipMalloc(&send, o.max_bytes), "malloc");
  gpu(hipMalloc(&recv, o.max_bytes), "malloc");

  std::optional<Nccl> nccl;
  NcclComm nccl_comm = nullptr;
  if (!o.nccl_path.empty()) {
    auto loaded = Nccl::load(o.nccl_path);
    check(loaded.status(), "NCCL");
    nccl = std::move(loaded).value();
    // NCCL reads its environment when the communicator is created: set before, in every rank.
    if (o.nccl_p2p_disable && ::setenv("NCCL_P2P_DISABLE", "1", 1) != 0) die("cannot set NCCL_P2P_DISABLE");
    NcclUniqueId id{};
    if (g_rank == 0) check(nccl->getUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    check(nccl->commInitRank(&nccl_comm, g_size, id, g_rank), "ncclCommInitRank");
  }
  // The sizes of the run: every one with at least one element per rank.
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= static_cast<std::size_t>(o.step_factor)) {
    if (countForBytes(o.collective, bytes, g_size, elem) > 0) sizes.push_back(bytes);
  }

  std::vector<Row> rows;
  std::string architecture;       // the transport's: the JSON names it for tuning tables
  std::string take_architecture;  // with "-host" where the communicator has a host-staged pair
  if (o.machines > 0) {
    auto from_environment = Config::fromEnvironment();
    check(from_environment.status(), "PEERREDUCE_* settings");
    auto machines = createMachines(MPI_COMM_WORLD, g_rank, g_size, o.machines, g_rank % devices, *from_environment);
    check(machines.status(), "communicator across machines");
    architecture = "machines";
    std::vector<MachineStrategy> strategies{MachineStrategy::kHierarchical, MachineStrategy::kFlat};
    if (o.collective == Collective::kBroadcast) strategies = {MachineStrategy::kAuto};
    for (MachineStrategy strategy : strategies) {
      const Launch across = [&](const void* s, void* r, std::size_t n, hipStream_t st) {
        return callMachineCollective(**machines, o.collective, o.root, strategy, s, r, n, o.dtype, st);
      };
      const std::string name = strategy == MachineStrategy::kAuto
                                   ? std::string("machines")
                                   : std::string("machines-") + machineStrategyName(strategy);
      for (std::size_t bytes : sizes) {
        for (int ip = 0; ip < (o.in_place ? 2 : 1); ++ip) {
          rows.push_back(measure("peerreduce", name, across, bytes, ip == 1, o, send, recv, stream));
        }
      }
    }
  }
  for (Algorithm algorithm : o.machines > 0 ? std::vector<Algorithm>{} : o.algorithms) {
    auto from_environment = Config::fromEnvironment();
    check(from_environment.status(), "PEERREDUCE_* settings");
    Config config = *from_environment;
    if (o.algorithm_given) {
      if (o.collective == Collective::kAllReduce) {
        config.algorithm = algorithm;
      } else {
        config.algorithmSettingOf(o.collective) = algorithm;
      }
    }
    if (o.link_mask) config.link_mask = *o.link_mask;
    auto gpu_transport = createGpuTransport(g_rank, g_size);
    check(gpu_transport.status(), "GPU transport");
    architecture = (*gpu_transport)->identity().architecture;
    auto bootstrap = createMpiBootstrap(MPI_COMM_WORLD);
    check(bootstrap.status(), "bootstrap");
    auto comm = Communicator::create(g_rank, g_size, *bootstrap, *gpu_transport, config);
    check(comm.status(), "communicator");
    // As the NCCL library keys its take table (nccl/take_table.h, takeTableArchitecture).
    take_architecture = architecture + ((*comm)->topology().hasLinkOf(LinkClass::kHostStaged) ? "-host" : "");
    if (o.batch > 0) {
      measureBatches(**comm, nccl ? &*nccl : nullptr, nccl_comm, o, send, recv, stream, rows);
      continue;
    }
    const Launch ours = [&](const void* s, void* r, std::size_t n, hipStream_t st) {
      return callCollective(**comm, o.collective, o.root, s, r, n, o.dtype, st);
    };
    for (std::size_t bytes : sizes) {
      const std::size_t count = countForBytes(o.collective, bytes, g_size, elem);
      auto chosen = (*comm)->explainSelection(o.collective, count, o.dtype, o.root);
      const std::string name(algorithmName(chosen.isOk() ? chosen->chosen : algorithm));
      for (int ip = 0; ip < (o.in_place ? 2 : 1); ++ip) {
        rows.push_back(measure("peerreduce", name, ours, bytes, ip == 1, o, send, recv, stream));
        // The blocks of the chosen plan's kernel (its first segment, out of place), as the GPU transport sizes it.
        rows.back().blocks = chosen.isOk() ? chosen->kernel_blocks : 0;
      }
    }
    const PinnedStats pinned = (*comm)->pinnedStats();
    if (g_rank == 0 && (pinned.bytes_pinned > 0 || pinned.bytes_staged > 0)) {
      std::printf("# %s: pinned host memory of rank 0: %" PRIu64 " bytes pinned (limit %" PRIu64 "), %" PRIu64
                  " bytes staged by %" PRIu64 " operations\n",
                  std::string(algorithmName(algorithm)).c_str(), pinned.bytes_pinned, pinned.limit_bytes,
                  pinned.bytes_staged, pinned.staged_operations);
    }
    if (o.profile) {
      // Outside graph capture (captured operations are not timed): `iters` operations per size, out of
      // place, then the profiler's summary of them.
      check((*comm)->enableProfiling(), "enableProfiling");
      for (std::size_t bytes : sizes) {
        for (int i = 0; i < o.iters; ++i) {
          check(ours(send, recv, countForBytes(o.collective, bytes, g_size, elem), stream), "profiled operation");
        }
      }
      check((*comm)->synchronize(stream), "synchronize");
      auto summary = (*comm)->profileSummary();
      check(summary.status(), "profileSummary");
      if (g_rank == 0) std::printf("%s", describe(*summary).c_str());
      (*comm)->disableProfiling();
    }
  }
  if (nccl && o.batch == 0) {
    const int nccl_dtype = ncclDataTypeOf(o.dtype);
    const Launch theirs = [&](const void* s, void* r, std::size_t n, hipStream_t st) {
      return nccl->collective(o.collective, o.root, s, r, n, nccl_dtype, nccl_comm, st);
    };
    for (std::size_t bytes : sizes) {
      for (int ip = 0; ip < (o.in_place ? 2 : 1); ++ip) {
        rows.push_back(measure("nccl", nccl->version() + (o.nccl_p2p_disable ? " p2p-off" : ""), theirs, bytes, ip == 1,
                               o, send, recv, stream));
      }
    }
  }

  if (g_rank == 0) {
    const RunInfo info{g_size,    o.dtype,      o.collective, o.root,           o.iters,
                       o.repeats, architecture, o.eager,      take_architecture};
    std::printf("%s", formatHeadline(info).c_str());
    const char* mask_env = std::getenv("PEERREDUCE_LINK_MASK");
    const std::string mask = o.link_mask ? *o.link_mask : (mask_env != nullptr ? mask_env : "");
    if (!mask.empty()) std::printf("# link mask: %s\n", mask.c_str());
    if (nccl && o.nccl_p2p_disable) std::printf("# NCCL with NCCL_P2P_DISABLE=1\n");
    std::printf("%s", formatTable(rows).c_str());
    auto write = [](const std::string& path, const std::string& text) {
      if (path.empty()) return;
      std::FILE* f = std::fopen(path.c_str(), "w");
      if (f == nullptr || std::fputs(text.c_str(), f) < 0) std::fprintf(stderr, "cannot write %s\n", path.c_str());
      if (f != nullptr) std::fclose(f);
    };
    write(o.csv_path, formatCsv(rows, info));
    write(o.json_path, formatJson(rows, info));
  }
  long long wrong = 0;
  for (const Row& r : rows) wrong += r.wrong;
  if (nccl) check(nccl->commDestroy(nccl_comm), "ncclCommDestroy");
  (void)hipFree(send);
  (void)hipFree(recv);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
