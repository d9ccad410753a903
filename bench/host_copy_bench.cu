// peerreduce-host-copy-bench: how data should cross between a GPU and pinned host memory, the question
// behind host-staged links. Per size, device -> host and host -> device, by the copy engine
// (hipMemcpyAsync) and by a kernel storing to / loading from host memory mapped into the GPU (what the
// host-staged kernels do today), on one GPU; then both directions at once, as a host-staged collective
// moves data (the copy engines on two streams, and a storing kernel beside a loading one): whether the
// link gives each direction its one-way rate or one budget shared by both is what bounds the host path
// (docs/ALGORITHMS.md, "GPUs without peer access"):
//   peerreduce-host-copy-bench [--device D] [--blocks B] [--min BYTES] [--max BYTES] [--malloc] [--csv]
// The host memory is what the GPU transport's host-staged regions use: a POSIX shared-memory segment
// registered mapped + portable (--malloc: hipHostMalloc mapped instead). Each result is checked (the
// first and last 16 bytes must have arrived), so a transfer that did not happen is an error, not a time.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "copy_kernel.cuh"
#include "gpu/host_registration.h"
#include "memory/shared_host_segment.h"
#include "portability.h"

namespace {

using peerreduce::bench::copyKernel;
using peerreduce::gpu::Bytes16;

constexpr int kThreads = 512;
constexpr int kWarmups = 2;

void check(hipError_t e, const char* what) {
  if (e != hipSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, hipGetErrorString(e));
    std::exit(1);
  }
}

struct Options {
  int device = 0;
  int blocks = 0;  // 0: the multiprocessor count
  std::size_t min_bytes = std::size_t{4} << 10;
  std::size_t max_bytes = std::size_t{256} << 20;
  bool malloc_host = false;
  bool csv = false;
};

std::size_t parseBytes(const char* text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  std::size_t scale = 1;
  if (*end == 'K' || *end == 'k') scale = std::size_t{1} << 10;
  if (*end == 'M' || *end == 'm') scale = std::size_t{1} << 20;
  if (*end == 'G' || *end == 'g') scale = std::size_t{1} << 30;
  if (end == text || value == 0) {
    std::fprintf(stderr, "not a byte size: %s (e.g. 4096, 64K, 16M)\n", text);
    std::exit(2);
  }
  return static_cast<std::size_t>(value) * scale;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--device" && has_value) {
      o.device = std::atoi(argv[++i]);
    } else if (arg == "--blocks" && has_value) {
      o.blocks = std::atoi(argv[++i]);
    } else if (arg == "--min" && has_value) {
      o.min_bytes = parseBytes(argv[++i]);
    } else if (arg == "--max" && has_value) {
      o.max_bytes = parseBytes(argv[++i]);
    } else if (arg == "--malloc") {
      o.malloc_host = true;
    } else if (arg == "--csv") {
      o.csv = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--device D] [--blocks B] [--min BYTES] [--max BYTES] [--malloc] [--csv]\n"
                   "unknown or incomplete argument: %s\n",
                   argv[0], arg.c_str());
      std::exit(2);
    }
  }
  if (o.min_bytes % 16 != 0 || o.max_bytes < o.min_bytes) {
    std::fprintf(stderr, "--min must be a multiple of 16 and at most --max\n");
    std::exit(2);
  }
  return o;
}

class Timer {
 public:
  explicit Timer(hipStream_t stream) : stream_(stream) {
    check(hipEventCreate(&start_), "hipEventCreate");
    check(hipEventCreate(&stop_), "hipEventCreate");
  }
  ~Timer() {
    (void)hipEventDestroy(start_);
    (void)hipEventDestroy(stop_);
  }
  // Microseconds per run of `work`, averaged over `reps` runs after kWarmups unmeasured ones.
  template <typename Work>
  double usPerRun(int reps, Work work) {
    for (int i = 0; i < kWarmups; ++i) work();
    check(hipEventRecord(start_, stream_), "hipEventRecord");
    for (int i = 0; i < reps; ++i) work();
    check(hipEventRecord(stop_, stream_), "hipEventRecord");
    check(hipEventSynchronize(stop_), "hipEventSynchronize");
    float ms = 0;
    check(hipEventElapsedTime(&ms, start_, stop_), "hipEventElapsedTime");
    return static_cast<double>(ms) * 1000.0 / reps;
  }

 private:
  hipStream_t stream_;
  hipEvent_t start_ = nullptr;
  hipEvent_t stop_ = nullptr;
};

// Microseconds per run of two pieces of work issued together on two streams (one run: one of each),
// averaged over `reps` runs after kWarmups unmeasured ones: from a start both streams wait for to the
// later of their ends.
class TwoStreamTimer {
 public:
  TwoStreamTimer(hipStream_t first, hipStream_t second) : first_(first), second_(second) {
    for (hipEvent_t* e : {&start_, &first_end_, &second_end_}) check(hipEventCreate(e), "hipEventCreate");
  }
  ~TwoStreamTimer() {
    for (hipEvent_t e : {start_, first_end_, second_end_}) (void)hipEventDestroy(e);
  }
  template <typename First, typename Second>
  double usPerRun(int reps, First first, Second second) {
    for (int i = 0; i < kWarmups; ++i) {
      first();
      second();
    }
    check(hipEventRecord(start_, first_), "hipEventRecord");
    check(hipStreamWaitEvent(second_, start_, 0), "hipStreamWaitEvent");
    for (int i = 0; i < reps; ++i) {
      first();
      second();
    }
    check(hipEventRecord(first_end_, first_), "hipEventRecord");
    check(hipEventRecord(second_end_, second_), "hipEventRecord");
    check(hipEventSynchronize(first_end_), "hipEventSynchronize");
    check(hipEventSynchronize(second_end_), "hipEventSynchronize");
    float first_ms = 0;
    float second_ms = 0;
    check(hipEventElapsedTime(&first_ms, start_, first_end_), "hipEventElapsedTime");
    check(hipEventElapsedTime(&second_ms, start_, second_end_), "hipEventElapsedTime");
    return static_cast<double>(std::max(first_ms, second_ms)) * 1000.0 / reps;
  }

 private:
  hipStream_t first_;
  hipStream_t second_;
  hipEvent_t start_ = nullptr;
  hipEvent_t first_end_ = nullptr;
  hipEvent_t second_end_ = nullptr;
};

// The first and last 16 bytes of `size` at `got` must equal those of `want` (host copies of both ends).
void expectArrived(const unsigned char* got, const unsigned char* want, std::size_t size, const char* what) {
  if (std::memcmp(got, want, 16) != 0 || std::memcmp(got + size - 16, want + size - 16, 16) != 0) {
    std::fprintf(stderr, "%s of %zu bytes: the data did not arrive\n", what, size);
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  check(hipSetDevice(o.device), "hipSetDevice");
  int sms = 0;
  check(hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, o.device), "hipDeviceGetAttribute");
  const int blocks_cap = o.blocks > 0 ? o.blocks : sms;
  hipStream_t stream = nullptr;
  check(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking), "hipStreamCreateWithFlags");
  hipStream_t upstream = nullptr;  // the second direction's stream when both run at once
  check(hipStreamCreateWithFlags(&upstream, hipStreamNonBlocking), "hipStreamCreateWithFlags");

  // Host memory as the transport's host-staged regions have it.
  unsigned char* host = nullptr;
  std::optional<peerreduce::SharedHostSegment> segment;
  if (o.malloc_host) {
    check(hipHostMalloc(reinterpret_cast<void**>(&host), o.max_bytes, hipHostMallocMapped | hipHostMallocPortable),
          "hipHostMalloc");
  } else {
    auto created = peerreduce::SharedHostSegment::create(o.max_bytes);
    if (!created.isOk()) {
      std::fprintf(stderr, "%s\n", created.status().toString().c_str());
      return 1;
    }
    segment.emplace(std::move(created).value());
    (void)segment->unlink();  // nobody else maps it
    const peerreduce::Status registered = peerreduce::registerHostPages(segment->data(), segment->size());
    if (!registered.isOk()) {
      std::fprintf(stderr, "%s\n", registered.toString().c_str());
      return 1;
    }
    host = static_cast<unsigned char*>(segment->data());
  }
  unsigned char* mapped = nullptr;
  check(hipHostGetDevicePointer(reinterpret_cast<void**>(&mapped), host, 0), "hipHostGetDevicePointer");
  unsigned char* device = nullptr;
  check(hipMalloc(reinterpret_cast<void**>(&device), o.max_bytes), "hipMalloc");

  // The second direction's buffers when both run at once: the device sends `device` up into `host` while
  // `host_source` (pinned and mapped like `host`) comes down into `device_sink`.
  unsigned char* host_source = nullptr;
  check(hipHostMalloc(reinterpret_cast<void**>(&host_source), o.max_bytes, hipHostMallocMapped | hipHostMallocPortable),
        "hipHostMalloc");
  unsigned char* mapped_source = nullptr;
  check(hipHostGetDevicePointer(reinterpret_cast<void**>(&mapped_source), host_source, 0), "hipHostGetDevicePointer");
  unsigned char* device_sink = nullptr;
  check(hipMalloc(reinterpret_cast<void**>(&device_sink), o.max_bytes), "hipMalloc");

  std::vector<unsigned char> pattern(o.max_bytes);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<unsigned char>(i * 131 + 7);
  check(hipMemcpy(device, pattern.data(), o.max_bytes, hipMemcpyHostToDevice), "hipMemcpy");
  std::memcpy(host_source, pattern.data(), o.max_bytes);

  Timer timer(stream);
  TwoStreamTimer both(stream, upstream);
  if (o.csv) {
    std::printf("bytes,d2h_copy_us,d2h_kernel_us,h2d_copy_us,h2d_kernel_us,blocks,both_copy_us,both_kernel_us\n");
  } else {
    std::printf("%s, %s, up to %d blocks x %d threads of 16-byte accesses\n",
                o.malloc_host ? "hipHostMalloc (mapped)" : "POSIX shared memory registered mapped + portable",
                PR_GPU_PLATFORM_NAME, blocks_cap, kThreads);
    std::printf("both ways: one transfer each way at once (GB/s: each direction's rate, then their sum)\n");
    std::printf("%12s | %21s %21s %7s | %21s %21s %7s | %29s %29s\n", "bytes", "D2H copy engine", "D2H kernel stores",
                "faster", "H2D copy engine", "H2D kernel loads", "faster", "both ways, copy engines",
                "both ways, kernels");
  }
  for (std::size_t size = o.min_bytes; size <= o.max_bytes; size *= 2) {
    const std::size_t vectors = size / 16;
    const auto per_block = static_cast<std::size_t>(kThreads) * peerreduce::bench::kCopyUnroll;
    const int blocks = static_cast<int>(std::max<std::size_t>(
        1, std::min<std::size_t>((vectors + per_block - 1) / per_block, static_cast<std::size_t>(blocks_cap))));
    // About 64 MiB moved per measurement, at least 5 and at most 1000 runs.
    const int reps =
        static_cast<int>(std::min<std::size_t>(1000, std::max<std::size_t>(5, (std::size_t{64} << 20) / size)));
    std::vector<unsigned char> ends(size);

    std::memset(host, 0, size);
    const double d2h_copy = timer.usPerRun(
        reps, [&] { check(hipMemcpyAsync(host, device, size, hipMemcpyDeviceToHost, stream), "hipMemcpyAsync D2H"); });
    expectArrived(host, pattern.data(), size, "D2H copy");
    std::memset(host, 0, size);
    const double d2h_kernel = timer.usPerRun(reps, [&] {
      copyKernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<Bytes16*>(mapped),
                                                  reinterpret_cast<const Bytes16*>(device), vectors);
      check(hipGetLastError(), "copyKernel D2H");
    });
    check(hipStreamSynchronize(stream), "hipStreamSynchronize");
    expectArrived(host, pattern.data(), size, "D2H kernel");

    // Host -> device: the host holds the pattern, the device buffer is cleared before each direction.
    check(hipMemsetAsync(device, 0, size, stream), "hipMemsetAsync");
    const double h2d_copy = timer.usPerRun(
        reps, [&] { check(hipMemcpyAsync(device, host, size, hipMemcpyHostToDevice, stream), "hipMemcpyAsync H2D"); });
    check(hipMemcpy(ends.data(), device, size, hipMemcpyDeviceToHost), "hipMemcpy");
    expectArrived(ends.data(), pattern.data(), size, "H2D copy");
    check(hipMemsetAsync(device, 0, size, stream), "hipMemsetAsync");
    const double h2d_kernel = timer.usPerRun(reps, [&] {
      copyKernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<Bytes16*>(device),
                                                  reinterpret_cast<const Bytes16*>(mapped), vectors);
      check(hipGetLastError(), "copyKernel H2D");
    });
    check(hipMemcpy(ends.data(), device, size, hipMemcpyDeviceToHost), "hipMemcpy");
    expectArrived(ends.data(), pattern.data(), size, "H2D kernel");

    // Both directions at once: `device` up into `host` on one stream, `host_source` down into `device_sink`
    // on the other; by copy engines, then by a storing kernel beside a loading one (half the blocks each).
    std::memset(host, 0, size);
    check(hipMemsetAsync(device_sink, 0, size, stream), "hipMemsetAsync");
    check(hipStreamSynchronize(stream), "hipStreamSynchronize");
    const double both_copy = both.usPerRun(
        reps,
        [&] { check(hipMemcpyAsync(host, device, size, hipMemcpyDeviceToHost, stream), "hipMemcpyAsync D2H (both)"); },
        [&] {
          check(hipMemcpyAsync(device_sink, host_source, size, hipMemcpyHostToDevice, upstream),
                "hipMemcpyAsync H2D (both)");
        });
    expectArrived(host, pattern.data(), size, "D2H copy (both ways)");
    check(hipMemcpy(ends.data(), device_sink, size, hipMemcpyDeviceToHost), "hipMemcpy");
    expectArrived(ends.data(), pattern.data(), size, "H2D copy (both ways)");
    std::memset(host, 0, size);
    check(hipMemsetAsync(device_sink, 0, size, stream), "hipMemsetAsync");
    check(hipStreamSynchronize(stream), "hipStreamSynchronize");
    const int half_blocks = std::max(1, blocks / 2);
    const double both_kernel = both.usPerRun(
        reps,
        [&] {
          copyKernel<<<half_blocks, kThreads, 0, stream>>>(reinterpret_cast<Bytes16*>(mapped),
                                                           reinterpret_cast<const Bytes16*>(device), vectors);
          check(hipGetLastError(), "copyKernel D2H (both)");
        },
        [&] {
          copyKernel<<<half_blocks, kThreads, 0, upstream>>>(reinterpret_cast<Bytes16*>(device_sink),
                                                             reinterpret_cast<const Bytes16*>(mapped_source), vectors);
          check(hipGetLastError(), "copyKernel H2D (both)");
        });
    expectArrived(host, pattern.data(), size, "D2H kernel (both ways)");
    check(hipMemcpy(ends.data(), device_sink, size, hipMemcpyDeviceToHost), "hipMemcpy");
    expectArrived(ends.data(), pattern.data(), size, "H2D kernel (both ways)");

    const auto gbps = [size](double us) { return static_cast<double>(size) / (us * 1000.0); };
    if (o.csv) {
      std::printf("%zu,%.3f,%.3f,%.3f,%.3f,%d,%.3f,%.3f\n", size, d2h_copy, d2h_kernel, h2d_copy, h2d_kernel, blocks,
                  both_copy, both_kernel);
    } else {
      std::printf(
          "%12zu | %9.2f us %6.2f GB/s %9.2f us %6.2f GB/s %7s | %9.2f us %6.2f GB/s %9.2f us %6.2f GB/s %7s | "
          "%9.2f us %6.2f x2 = %6.2f GB/s %9.2f us %6.2f x2 = %6.2f GB/s\n",
          size, d2h_copy, gbps(d2h_copy), d2h_kernel, gbps(d2h_kernel), d2h_copy <= d2h_kernel ? "copy" : "kernel",
          h2d_copy, gbps(h2d_copy), h2d_kernel, gbps(h2d_kernel), h2d_copy <= h2d_kernel ? "copy" : "kernel", both_copy,
          gbps(both_copy), 2 * gbps(both_copy), both_kernel, gbps(both_kernel), 2 * gbps(both_kernel));
    }
  }
  check(hipFree(device_sink), "hipFree");
  check(hipHostFree(host_source), "hipHostFree");
  check(hipStreamDestroy(upstream), "hipStreamDestroy");
  check(hipFree(device), "hipFree");
  if (o.malloc_host) {
    check(hipHostFree(host), "hipHostFree");
  } else {
    peerreduce::unregisterHostPages(segment->data(), segment->size());
  }
  check(hipStreamDestroy(stream), "hipStreamDestroy");
  return 0;
}
