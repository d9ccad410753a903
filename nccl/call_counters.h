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

  void count(CallKind kind, bool was_taken, std::size_t bytes);
  Tally totalTaken() const;
  Tally totalForwarded() const;
};

// One line: "rank 1 of 4: took 12 calls (3145728 bytes), forwarded 3 calls (1073741824 bytes); ncclAllReduce
// 12 taken / 1 forwarded, ncclSend 0 / 2", kinds without calls left out; `why_none` (when not empty) says why
// nothing could be taken.
std::string describeCounters(const CallCounters& counters, int rank, int size, const std::string& why_none);

}  // namespace peerreduce::nccl
