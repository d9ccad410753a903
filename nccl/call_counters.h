// What a communicator took and forwarded, per kind of call: calls and bytes (the whole collective's
// buffer, as the take decision counts them). PEERREDUCE_NCCL_SUMMARY=1 prints it when the communicator
// is destroyed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "nccl/take_policy.h"

namespace peerreduce::nccl {

struct CallCounters {
  struct Tally {
    std::uint64_t calls = 0;
    std::uint64_t bytes = 0;
  };
  std::array<Tally, kCallKindCount> taken{};
  std::array<Tally, kCallKindCount> forwarded{};
  // Host time inside the library of the collective calls timed (PEERREDUCE_NCCL_SUMMARY on): from entry to
  // return, deciding included, so a caller whose eager calls are slow sees whether the library's side is.
  struct HostTime {
    std::uint64_t calls = 0;
    std::uint64_t total_ns = 0;
    std::uint64_t max_ns = 0;
  };
  HostTime taken_host{};
  HostTime forwarded_host{};

  void count(CallKind kind, bool was_taken, std::size_t bytes);
  void time(bool was_taken, std::uint64_t ns);
  Tally totalTaken() const;
  Tally totalForwarded() const;
};

// One line: "rank 1 of 4: took 12 calls (3145728 bytes), forwarded 3 calls (1073741824 bytes); ncclAllReduce
// 12 taken / 1 forwarded, ncclSend 0 / 2", kinds without calls left out; `why_none` (when not empty) says why
// nothing could be taken. Timed calls add "; host time per call: taken 2.1 us (most 9.8), forwarded 0.4 us
// (most 1.2)".
std::string describeCounters(const CallCounters& counters, int rank, int size, const std::string& why_none);

}  // namespace peerreduce::nccl
