// peerreduce-gpu-debug: one small allreduce per algorithm on real GPUs, printing what each rank sent,
// got and expected, and any transport error. For diagnosing the GPU backend by hand:
//   mpirun -np 2 peerreduce-gpu-debug [count]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "peerreduce/communicator.h"
#include "peerreduce/gpu.h"
#include "peerreduce/mpi_bootstrap.h"
#include "portability.h"

using namespace peerreduce;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 64;
  int failures = 0;
  for (int a = 1; a < kBuiltAlgorithmCount; ++a) {
    Config config;
    config.algorithm = static_cast<Algorithm>(a);
    config.timeout = std::chrono::milliseconds(3000);
    auto bootstrap = createMpiBootstrap(MPI_COMM_WORLD).value();
    auto transport = createGpuTransport(rank, size);
    if (!transport.isOk()) {
      std::printf("rank %d: %s\n", rank, transport.status().toString().c_str());
      return 1;
    }
    auto comm = Communicator::create(rank, size, bootstrap, *transport, config);
    if (!comm.isOk()) {
      std::printf("rank %d: %s\n", rank, comm.status().toString().c_str());
      return 1;
    }
    std::vector<float> in(count), out(count, -1.0f);
    for (std::size_t i = 0; i < count; ++i) in[i] = static_cast<float>((rank + 1) * 100 + static_cast<int>(i));
    float *d_in = nullptr, *d_out = nullptr;
    (void)hipMalloc(reinterpret_cast<void**>(&d_in), count * sizeof(float));
    (void)hipMalloc(reinterpret_cast<void**>(&d_out), count * sizeof(float));
    (void)hipMemcpy(d_in, in.data(), count * sizeof(float), hipMemcpyHostToDevice);
    (void)hipMemcpy(d_out, out.data(), count * sizeof(float), hipMemcpyHostToDevice);
    Status s = (*comm)->allreduce(d_in, d_out, count, DataType::kFloat32, ReduceOp::kSum, nullptr);
    if (s.isOk()) s = (*comm)->synchronize(nullptr);
    (void)hipMemcpy(out.data(), d_out, count * sizeof(float), hipMemcpyDeviceToHost);
    int wrong = 0;
    for (std::size_t i = 0; i < count; ++i) {
      float expected = 0;
      for (int r = 0; r < size; ++r) expected += static_cast<float>((r + 1) * 100 + static_cast<int>(i));
      if (out[i] != expected) {
        if (wrong < 4) {
          std::printf("rank %d %s: out[%zu] = %g, expected %g (own input %g)\n", rank,
                      std::string(algorithmName(config.algorithm)).c_str(), i, out[i], expected, in[i]);
        }
        ++wrong;
      }
    }
    std::printf("rank %d %-20s status %s, %d of %zu wrong\n", rank,
                std::string(algorithmName(config.algorithm)).c_str(), s.toString().c_str(), wrong, count);
    failures += wrong > 0 || !s.isOk();
    (void)hipFree(d_in);
    (void)hipFree(d_out);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
