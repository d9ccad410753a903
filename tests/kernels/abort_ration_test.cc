// The ration of abort-word reads (kernels/abort_ration.h), as the waiting threads of one launch apply
// it: a wait within the grace period never reads host memory, and however many threads wait, the launch
// reads the abort word at most once per interval (the regression: every waiting thread read it every
// few polls, and an operation whose peer was late queued thousands of PCIe reads).
#include "abort_ration.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace peerreduce::gpu {
namespace {

// `threads` waiters that began at `start_ns` and check every `check_every_ns` (staggered by thread),
// sharing one last-check word claimed by compare-and-swap (here sequential, as one claim at a time wins
// on the GPU); returns the times at which the abort word was read, until `end_ns`.
std::vector<std::uint64_t> simulateReads(int threads, std::uint64_t start_ns, std::uint64_t check_every_ns,
                                         std::uint64_t end_ns) {
  std::uint64_t last_check = 0;
  std::vector<std::uint64_t> reads;
  for (std::uint64_t now = start_ns; now < end_ns; now += check_every_ns) {
    for (int t = 0; t < threads; ++t) {
      const std::uint64_t at = now + static_cast<std::uint64_t>(t) % check_every_ns;
      const std::uint64_t seen = last_check;  // each thread's read of the word before its claim
      if (abortCheckDue(at, start_ns, seen) && last_check == seen) {
        last_check = at;
        reads.push_back(at);
      }
    }
  }
  return reads;
}

TEST(AbortRation, WaitsWithinTheGraceNeverReadHostMemory) {
  const std::uint64_t start = 5'000'000'000ull;
  EXPECT_TRUE(simulateReads(8192, start, 300, start + kAbortGraceNs - 300).empty())
      << "a wait of peers in step must not cross PCIe";
  EXPECT_FALSE(abortCheckDue(start + kAbortGraceNs - 1, start, 0));
  EXPECT_TRUE(abortCheckDue(start + kAbortGraceNs, start, 0));
}

TEST(AbortRation, ManyWaitersReadAtMostOncePerInterval) {
  const std::uint64_t start = 7'000'000'000ull;
  const std::uint64_t span = 1'000'000;  // 1 ms of waiting by 8192 threads, each checking every 300 ns
  const std::vector<std::uint64_t> reads = simulateReads(8192, start, 300, start + span);
  ASSERT_FALSE(reads.empty()) << "a long wait must still see an abort";
  EXPECT_LE(reads.size(), (span - kAbortGraceNs) / kAbortCheckIntervalNs + 1);
  for (std::size_t i = 1; i < reads.size(); ++i) {
    EXPECT_GE(reads[i] - reads[i - 1], kAbortCheckIntervalNs) << "read " << i;
  }
  EXPECT_LE(reads.front() - start, kAbortGraceNs + 300) << "the first read comes right after the grace";
  EXPECT_LE(start + span - reads.back(), kAbortCheckIntervalNs + 300) << "reads go on while the wait lasts";
}

TEST(AbortRation, ACheckClaimedAfterThisWaiterReadTheTimerIsNotDue) {
  const std::uint64_t start = 9'000'000'000ull;
  const std::uint64_t now = start + 10 * kAbortGraceNs;
  EXPECT_FALSE(abortCheckDue(now, start, now + 50)) << "the claimed time must never move backwards";
  EXPECT_TRUE(abortCheckDue(now, start, now - kAbortCheckIntervalNs));
  EXPECT_TRUE(abortCheckDue(now, start, 0)) << "no check yet";
}

}  // namespace
}  // namespace peerreduce::gpu
