// Profiling of allreduce operations: per-operation records and summary statistics.
//
// Off by default, and then free: the allreduce path checks one pointer. Communicator::enableProfiling
// reserves the records and the transport's time marks up front; each allreduce then places a mark
// before its first segment and after its last, in order with the work on its stream, and records what
// it ran. Durations are filled in when the operation has finished (real time on GPUs, from events;
// virtual time on the simulator): Communicator::profile() returns what is known so far.
//
// Example:
//   comm->enableProfiling();
//   ... allreduces, synchronize ...
//   std::printf("%s", peerreduce::describe(comm->profileSummary().value()).c_str());
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "peerreduce/types.h"

namespace peerreduce {

inline constexpr std::size_t kDefaultProfileCapacity = 4096;
inline constexpr std::size_t kMaxProfileCapacity = std::size_t{1} << 20;

struct OperationProfile {
  std::uint64_t sequence = 0;  // allreduce number on this communicator since profiling was enabled
  std::size_t count = 0;
  std::size_t bytes = 0;  // count x element size
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  Algorithm algorithm = Algorithm::kAuto;
  int segments = 0;     // submissions the operation took (more when scratch was short)
  int stream = 0;       // the stream's number on the communicator (by first use)
  int batch_items = 1;  // buffers the operation reduced (more than 1: a group of allreduceBatch)
  // False while the operation runs, and for good when it failed or was enqueued into a graph being
  // captured (a captured operation runs at every replay; the benchmark times replays itself).
  bool timed = false;
  double duration_us = 0.0;  // from the start of its first segment to the end of its last
  double algbw_gbps = 0.0;   // bytes / duration
  double busbw_gbps = 0.0;   // algbw x 2(n-1)/n, as nccl-tests reports it
};

struct AlgorithmProfile {
  Algorithm algorithm = Algorithm::kAuto;
  std::uint64_t operations = 0;  // timed ones
  std::uint64_t bytes = 0;
  double total_us = 0.0;
};

// Over the records held (the most recent `capacity` operations).
struct ProfileSummary {
  std::uint64_t operations = 0;  // records held
  std::uint64_t timed = 0;
  std::uint64_t dropped = 0;  // older records overwritten since profiling was enabled
  std::uint64_t bytes = 0;    // of the timed operations
  double total_us = 0.0;
  double min_us = 0.0;
  double median_us = 0.0;
  double max_us = 0.0;
  double busbw_gbps = 0.0;                     // 2(n-1)/n x bytes / total time
  std::vector<AlgorithmProfile> by_algorithm;  // algorithms in enum order, those that ran
};

// A few lines for people: counts, times, bandwidth, and one line per algorithm.
std::string describe(const ProfileSummary& summary);

}  // namespace peerreduce
