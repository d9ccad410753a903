// peerreduce-bench: allreduce time and bandwidth against NCCL, on the same GPUs, buffers and run.
//
// nccl-tests conventions: sizes in bytes, algbw = bytes / time, busbw = algbw x 2(n-1)/n, out-of-place
// and in-place, a #wrong count per size from a real check. Timing: a CUDA/HIP graph of --iters
// allreduces is captured once per size and library, replayed --repeats times after warm-up; each
// replay is timed with events on every rank, the slowest rank's time counts, and best and median over
// the replays are reported. Run one process per GPU:
//   mpirun -np 4 peerreduce-bench --nccl /path/to/libnccl.so.2 --json out.json --csv out.csv
// With --batch N it measures batches instead: N tensors of each size (up to --batch-max-bytes each)
// reduced by one allreduceBatch ("batch-N"), by N separate allreduce calls ("separate-N") and by NCCL's
// N calls inside one ncclGroupStart/End ("group-N"); bytes are the N tensors together.
// PEERREDUCE_* variables apply (--algo wins over PEERREDUCE_ALGO, --link-mask over PEERREDUCE_LINK_MASK),
// so host-staged links run with their usual table: --link-mask host:all (every link through pinned host
// memory; the pinned pool's traffic is printed). --nccl-p2p-disable runs NCCL beside it with
// NCCL_P2P_DISABLE=1, so both libraries move data through the host. --ce runs the copy-engine probe
// (ce_probe.cc) instead and exits.
#include <mpi.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ce_probe.h"
#include "nccl_loader.h"
#include "peerreduce/communicator.h"
#include "peerreduce/gpu.h"
#include "peerreduce/mpi_bootstrap.h"
#include "portability.h"
#include "reference/reference.h"

namespace peerreduce::bench {
namespace {

struct Options {
  std::size_t min_bytes = 4 << 10;
  std::size_t max_bytes = std::size_t{256} << 20;
  int step_factor = 4;
  DataType dtype = DataType::kFloat32;
  std::vector<Algorithm> algorithms = {Algorithm::kAuto};
  int iters = 20;
  int repeats = 5;
  int warmup = 3;
  std::string nccl_path;
  std::string json_path;
  std::string csv_path;
  bool in_place = true;
  bool profile = false;                    // also run every size eagerly with the profiler on and print its summary
  bool algorithm_given = false;            // --algo: overrides PEERREDUCE_ALGO
  std::optional<std::string> link_mask;    // --link-mask: overrides PEERREDUCE_LINK_MASK
  bool nccl_p2p_disable = false;           // --nccl-p2p-disable: NCCL_P2P_DISABLE=1 for NCCL's communicator
  int batch = 0;                           // tensors per batch; 0: no batch measurements
  std::size_t batch_max_bytes = 64 << 10;  // largest tensor of a batch
  bool ce_probe = false;                   // --ce: the copy-engine probe only (ce_probe.h)
};

struct Timing {
  double best_us = 0;
  double median_us = 0;
};

struct Row {
  std::string library;
  std::string algorithm;
  std::size_t bytes = 0;
  bool in_place = false;
  Timing time;
  double algbw = 0;
  double busbw = 0;
  long long wrong = 0;
  int batch = 0;  // tensors of a batch measurement (0: one tensor)
};

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

std::size_t parseBytes(const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  double scale = 1;
  if (end && (*end == 'K' || *end == 'k')) scale = 1024;
  if (end && (*end == 'M' || *end == 'm')) scale = 1024.0 * 1024;
  if (end && (*end == 'G' || *end == 'g')) scale = 1024.0 * 1024 * 1024;
  if (!(v > 0)) die(std::string("bad size '") + text + "'");
  return static_cast<std::size_t>(v * scale);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--min-bytes") {
      o.min_bytes = parseBytes(next());
    } else if (a == "--max-bytes") {
      o.max_bytes = parseBytes(next());
    } else if (a == "--step-factor") {
      o.step_factor = std::max(2, std::atoi(next()));
    } else if (a == "--dtype") {
      auto d = parseDataType(next());
      check(d.status(), "--dtype");
      if (*d != DataType::kFloat32 && *d != DataType::kBFloat16) die("--dtype takes fp32 or bf16");
      o.dtype = *d;
    } else if (a == "--algo") {
      const std::string v = next();
      o.algorithms.clear();
      o.algorithm_given = true;
      if (v == "all") {
        for (int k = 1; k < kAlgorithmCount; ++k) o.algorithms.push_back(static_cast<Algorithm>(k));
      } else {
        auto alg = parseAlgorithm(v);
        check(alg.status(), "--algo");
        o.algorithms.push_back(*alg);
      }
    } else if (a == "--iters") {
      o.iters = std::max(1, std::atoi(next()));
    } else if (a == "--repeats") {
      o.repeats = std::max(1, std::atoi(next()));
    } else if (a == "--warmup") {
      o.warmup = std::max(0, std::atoi(next()));
    } else if (a == "--nccl") {
      o.nccl_path = next();
    } else if (a == "--json") {
      o.json_path = next();
    } else if (a == "--csv") {
      o.csv_path = next();
    } else if (a == "--link-mask") {
      o.link_mask = next();
    } else if (a == "--nccl-p2p-disable") {
      o.nccl_p2p_disable = true;
    } else if (a == "--no-in-place") {
      o.in_place = false;
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--batch") {
      o.batch = std::atoi(next());
      if (o.batch < 1 || o.batch > static_cast<int>(kMaxBatchItems)) {
        die("--batch takes 1.." + std::to_string(kMaxBatchItems) + " tensors");
      }
    } else if (a == "--batch-max-bytes") {
      o.batch_max_bytes = parseBytes(next());
    } else if (a == "--ce") {
      o.ce_probe = true;
    } else {
      die("unknown option " + a);
    }
  }
  return o;
}

// Values whose sum over any number of ranks is exact in fp32 and bf16: small integers.
void fillInput(std::vector<unsigned char>& host, DataType dtype, std::size_t count, int rank) {
  const std::size_t elem = dataTypeSize(dtype);
  host.resize(count * elem);
  for (std::size_t i = 0; i < count; ++i) {
    const float v = static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(rank) * 13) % 9) - 4);
    if (dtype == DataType::kFloat32) {
      std::memcpy(host.data() + i * elem, &v, sizeof(v));
    } else {
      std::uint32_t bits;
      std::memcpy(&bits, &v, sizeof(bits));
      const auto b = static_cast<std::uint16_t>(bits >> 16);  // exact: small integers fit bf16
      std::memcpy(host.data() + i * elem, &b, sizeof(b));
    }
  }
}

float expectedAt(std::size_t i) {
  float sum = 0;
  for (int r = 0; r < g_size; ++r)
    sum += static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(r) * 13) % 9) - 4);
  return sum;
}

long long countWrong(const std::vector<unsigned char>& host, DataType dtype, std::size_t count) {
  long long wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    float got;
    if (dtype == DataType::kFloat32) {
      std::memcpy(&got, host.data() + i * 4, 4);
    } else {
      std::uint16_t b;
      std::memcpy(&b, host.data() + i * 2, 2);
      const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
      std::memcpy(&got, &bits, 4);
    }
    if (got != expectedAt(i)) ++wrong;
  }
  long long total = 0;
  MPI_Allreduce(&wrong, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

using Launch = std::function<Status(const void*, void*, std::size_t, hipStream_t)>;

// Captures `iters` launches into a graph and times `repeats` replays; the slowest rank counts.
Timing timeGraph(const Launch& launch, const void* send, void* recv, std::size_t count, const Options& o,
                 hipStream_t stream) {
  hipGraph_t graph;
  hipGraphExec_t exec;
  gpu(hipStreamBeginCapture(stream, hipStreamCaptureModeThreadLocal), "begin capture");
  for (int i = 0; i < o.iters; ++i) check(launch(send, recv, count, stream), "launch during capture");
  gpu(hipStreamEndCapture(stream, &graph), "end capture");
  gpu(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0), "instantiate");
  hipEvent_t start, stop;
  gpu(hipEventCreate(&start), "event");
  gpu(hipEventCreate(&stop), "event");
  gpu(hipGraphLaunch(exec, stream), "warm-up replay");
  gpu(hipStreamSynchronize(stream), "sync");
  std::vector<double> times;
  for (int r = 0; r < o.repeats; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    gpu(hipEventRecord(start, stream), "record");
    gpu(hipGraphLaunch(exec, stream), "replay");
    gpu(hipEventRecord(stop, stream), "record");
    gpu(hipEventSynchronize(stop), "sync");
    float ms = 0;
    gpu(hipEventElapsedTime(&ms, start, stop), "elapsed");
    double mine = static_cast<double>(ms) * 1000.0 / o.iters;
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(slowest);
  }
  gpu(hipGraphExecDestroy(exec), "destroy exec");
  gpu(hipGraphDestroy(graph), "destroy graph");
  gpu(hipEventDestroy(start), "event");
  gpu(hipEventDestroy(stop), "event");
  std::sort(times.begin(), times.end());
  return Timing{times.front(), times[times.size() / 2]};
}

Row measure(const std::string& library, const std::string& algorithm, const Launch& launch, std::size_t bytes,
            bool in_place, const Options& o, void* send, void* recv, hipStream_t stream) {
  const std::size_t elem = dataTypeSize(o.dtype);
  const std::size_t count = bytes / elem;
  std::vector<unsigned char> host;
  fillInput(host, o.dtype, count, g_rank);
  void* out = in_place ? send : recv;
  Row row;
  row.library = library;
  row.algorithm = algorithm;
  row.bytes = count * elem;
  row.in_place = in_place;
  // Correctness: a fresh input, one allreduce, compare every element.
  gpu(hipMemcpy(send, host.data(), host.size(), hipMemcpyHostToDevice), "upload");
  if (!in_place) gpu(hipMemset(recv, 0xff, host.size()), "poison");  // NaN pattern: unwritten elements show
  // The copy and the memset run on the legacy default stream and may still be in flight.
  gpu(hipDeviceSynchronize(), "settle uploads");
  check(launch(send, out, count, stream), "allreduce");
  gpu(hipStreamSynchronize(stream), "sync");
  std::vector<unsigned char> result(host.size());
  gpu(hipMemcpy(result.data(), out, result.size(), hipMemcpyDeviceToHost), "download");
  row.wrong = countWrong(result, o.dtype, count);
  for (int w = 0; w < o.warmup; ++w) check(launch(send, out, count, stream), "warm-up");
  gpu(hipStreamSynchronize(stream), "sync");
  row.time = timeGraph(launch, send, out, count, o, stream);
  row.algbw = static_cast<double>(row.bytes) / (row.time.best_us * 1e3);  // GB/s
  row.busbw = row.algbw * 2.0 * (g_size - 1) / g_size;
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
  const int nccl_dtype = o.dtype == DataType::kFloat32 ? kNcclFloat32 : kNcclBfloat16;
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
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const Options o = parse(argc, argv);
  if (o.ce_probe) {
    const int code = runCopyEngineProbe(MPI_COMM_WORLD);
    MPI_Finalize();
    return code;
  }
  auto transport_bootstrap = createMpiBootstrap(MPI_COMM_WORLD);
  check(transport_bootstrap.status(), "bootstrap");
  hipStream_t stream;
  int devices = 0;
  gpu(hipGetDeviceCount(&devices), "device count");
  gpu(hipSetDevice(g_rank % devices), "set device");
  gpu(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "stream");
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

  std::vector<Row> rows;
  for (Algorithm algorithm : o.algorithms) {
    auto from_environment = Config::fromEnvironment();
    check(from_environment.status(), "PEERREDUCE_* settings");
    Config config = *from_environment;
    if (o.algorithm_given) config.algorithm = algorithm;
    if (o.link_mask) config.link_mask = *o.link_mask;
    auto gpu_transport = createGpuTransport(g_rank, g_size);
    check(gpu_transport.status(), "GPU transport");
    auto bootstrap = createMpiBootstrap(MPI_COMM_WORLD);
    check(bootstrap.status(), "bootstrap");
    auto comm = Communicator::create(g_rank, g_size, *bootstrap, *gpu_transport, config);
    check(comm.status(), "communicator");
    if (o.batch > 0) {
      measureBatches(**comm, nccl ? &*nccl : nullptr, nccl_comm, o, send, recv, stream, rows);
      continue;
    }
    for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= static_cast<std::size_t>(o.step_factor)) {
      const std::size_t count = bytes / dataTypeSize(o.dtype);
      auto chosen = (*comm)->explainSelection(count, o.dtype);
      const std::string name(algorithmName(chosen.isOk() ? chosen->chosen : algorithm));
      const Launch ours = [&](const void* s, void* r, std::size_t n, hipStream_t st) {
        return (*comm)->allreduce(s, r, n, o.dtype, ReduceOp::kSum, st);
      };
      for (int ip = 0; ip < (o.in_place ? 2 : 1); ++ip) {
        rows.push_back(measure("peerreduce", name, ours, bytes, ip == 1, o, send, recv, stream));
      }
    }
    const PinnedStats pinned = (*comm)->pinnedStats();
    if (g_rank == 0 && (pinned.bytes_pinned > 0 || pinned.bytes_staged > 0)) {
      std::printf("# %s: pinned host memory of rank 0: %" PRIu64 " bytes pinned (limit %" PRIu64 "), %" PRIu64
                  " bytes staged by %" PRIu64 " operations\n",
                  std::string(algorithmName(config.algorithm)).c_str(), pinned.bytes_pinned, pinned.limit_bytes,
                  pinned.bytes_staged, pinned.staged_operations);
    }
    if (o.profile) {
      // Outside graph capture (captured operations are not timed): `iters` operations per size, then
      // the profiler's summary of them.
      check((*comm)->enableProfiling(), "enableProfiling");
      for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= static_cast<std::size_t>(o.step_factor)) {
        for (int i = 0; i < o.iters; ++i) {
          check((*comm)->allreduce(send, recv, bytes / dataTypeSize(o.dtype), o.dtype, ReduceOp::kSum, stream),
                "profiled allreduce");
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
    const int nccl_dtype = o.dtype == DataType::kFloat32 ? kNcclFloat32 : kNcclBfloat16;
    const Launch theirs = [&](const void* s, void* r, std::size_t n, hipStream_t st) {
      return nccl->allReduce(s, r, n, nccl_dtype, kNcclSum, nccl_comm, st);
    };
    for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= static_cast<std::size_t>(o.step_factor)) {
      for (int ip = 0; ip < (o.in_place ? 2 : 1); ++ip) {
        rows.push_back(measure("nccl", nccl->version() + (o.nccl_p2p_disable ? " p2p-off" : ""), theirs, bytes, ip == 1,
                               o, send, recv, stream));
      }
    }
  }

  if (g_rank == 0) {
    std::printf("# peerreduce-bench: %d ranks, %s, sum; graph of %d ops, best/median of %d replays (us)\n", g_size,
                std::string(dataTypeName(o.dtype)).c_str(), o.iters, o.repeats);
    const char* mask_env = std::getenv("PEERREDUCE_LINK_MASK");
    const std::string mask = o.link_mask ? *o.link_mask : (mask_env != nullptr ? mask_env : "");
    if (!mask.empty()) std::printf("# link mask: %s\n", mask.c_str());
    if (nccl && o.nccl_p2p_disable) std::printf("# NCCL with NCCL_P2P_DISABLE=1\n");
    std::printf("# %12s %-8s %-20s %10s %10s %10s %10s %7s %10s %8s\n", "bytes", "place", "algorithm", "best_us",
                "median_us", "algbw", "busbw", "#wrong", "nccl_us", "ratio");
    for (const Row& r : rows) {
      if (r.library != "peerreduce") continue;
      double nccl_us = 0;
      for (const Row& n : rows) {
        if (n.library == "nccl" && n.bytes == r.bytes && n.in_place == r.in_place && n.batch == r.batch) {
          nccl_us = n.time.best_us;
        }
      }
      std::printf("  %12zu %-8s %-20s %10.2f %10.2f %10.2f %10.2f %7lld %10.2f %8.3f\n", r.bytes,
                  r.in_place ? "in" : "out", r.algorithm.c_str(), r.time.best_us, r.time.median_us, r.algbw, r.busbw,
                  r.wrong, nccl_us, nccl_us > 0 ? r.time.best_us / nccl_us : 0.0);
    }
    for (const Row& n : rows) {
      if (n.library != "nccl") continue;
      std::printf("  nccl %-4s %12zu %-4s %10.2f us %10.2f GB/s busbw  #wrong %lld\n", n.algorithm.c_str(), n.bytes,
                  n.in_place ? "in" : "out", n.time.best_us, n.busbw, n.wrong);
    }
    if (!o.csv_path.empty()) {
      if (std::FILE* f = std::fopen(o.csv_path.c_str(), "w")) {
        std::fprintf(f, "library,algorithm,ranks,dtype,bytes,in_place,best_us,median_us,algbw_gbps,busbw_gbps,wrong\n");
        for (const Row& r : rows) {
          std::fprintf(f, "%s,%s,%d,%s,%zu,%d,%.3f,%.3f,%.3f,%.3f,%lld\n", r.library.c_str(), r.algorithm.c_str(),
                       g_size, std::string(dataTypeName(o.dtype)).c_str(), r.bytes, r.in_place ? 1 : 0, r.time.best_us,
                       r.time.median_us, r.algbw, r.busbw, r.wrong);
        }
        std::fclose(f);
      }
    }
    if (!o.json_path.empty()) {
      if (std::FILE* f = std::fopen(o.json_path.c_str(), "w")) {
        std::fprintf(f, "{\"ranks\":%d,\"dtype\":\"%s\",\"iters\":%d,\"repeats\":%d,\"rows\":[", g_size,
                     std::string(dataTypeName(o.dtype)).c_str(), o.iters, o.repeats);
        for (std::size_t i = 0; i < rows.size(); ++i) {
          const Row& r = rows[i];
          std::fprintf(f,
                       "%s{\"library\":\"%s\",\"algorithm\":\"%s\",\"bytes\":%zu,\"in_place\":%s,\"best_us\":%.3f,"
                       "\"median_us\":%.3f,\"algbw_gbps\":%.3f,\"busbw_gbps\":%.3f,\"wrong\":%lld}",
                       i ? "," : "", r.library.c_str(), r.algorithm.c_str(), r.bytes, r.in_place ? "true" : "false",
                       r.time.best_us, r.time.median_us, r.algbw, r.busbw, r.wrong);
        }
        std::fprintf(f, "]}\n");
        std::fclose(f);
      }
    }
  }
  long long wrong = 0;
  for (const Row& r : rows) wrong += r.wrong;
  if (nccl) check(nccl->commDestroy(nccl_comm), "ncclCommDestroy");
  (void)hipFree(send);
  (void)hipFree(recv);
  MPI_Finalize();
  return wrong == 0 ? 0 : 1;
}
