// Hardware-only: user-buffer registration through the GPU transport. Every rank registers a range in
// the middle of a device allocation; every peer's range, opened through an IPC handle (or directly
// within one process), holds that peer's bytes; a second range of the same allocation reuses its
// export; host memory is refused on every rank, naming the problem.
#include <gtest/gtest.h>

#include <vector>

#include "portability.h"
#include "world_provider.h"

namespace peerreduce::testing {
namespace {

constexpr std::size_t kAllocation = 1 << 20;
constexpr std::size_t kOffset = 4096 + 16;
constexpr std::size_t kRegistrationHwBytes = 64 << 10;

std::byte patternOf(int rank, std::size_t i) {
  return static_cast<std::byte>((rank * 37 + static_cast<int>(i) * 13) & 0xff);
}

TEST(GpuRegistration, EveryPeersRegisteredRangeHoldsItsBytesAndExportsAreReused) {
  WorldProvider& provider = worldProvider();
  ASSERT_TRUE(provider.onHardware()) << "run under mpirun in a GPU build";
  auto world = provider.acquire(provider.fixedWorldSize(), Config{}, 1);
  ASSERT_TRUE(world.isOk()) << world.status().toString();
  TestWorld& w = **world;
  const int rank = w.localRanks().front();
  Communicator& comm = w.comm(rank);
  unsigned char* allocation = nullptr;
  ASSERT_EQ(hipMalloc(reinterpret_cast<void**>(&allocation), kAllocation), hipSuccess);
  std::vector<std::byte> mine(kRegistrationHwBytes);
  for (std::size_t i = 0; i < kRegistrationHwBytes; ++i) mine[i] = patternOf(rank, i);
  ASSERT_EQ(hipMemcpy(allocation + kOffset, mine.data(), kRegistrationHwBytes, hipMemcpyHostToDevice), hipSuccess);
  const RegistrationStats before = comm.registrationStats();

  auto reg = comm.registerBuffer(allocation + kOffset, kRegistrationHwBytes);
  bool ok = reg.isOk();
  EXPECT_TRUE(ok) << reg.status().toString();
  int wrong_peers = 0;
  if (ok) {
    EXPECT_EQ(reg->allocationBase(), allocation);
    EXPECT_EQ(reg->offset(), kOffset);
    for (int p = 0; p < w.size(); ++p) {
      auto view = reg->peer(p);
      if (!view.isOk() || view->bytes != kRegistrationHwBytes) {
        ++wrong_peers;
        continue;
      }
      std::vector<std::byte> theirs(kRegistrationHwBytes);
      if (hipMemcpy(theirs.data(), view->data, kRegistrationHwBytes, hipMemcpyDeviceToHost) != hipSuccess) {
        ++wrong_peers;
        continue;
      }
      for (std::size_t i = 0; i < kRegistrationHwBytes; ++i) {
        if (theirs[i] != patternOf(p, i)) {
          ++wrong_peers;
          break;
        }
      }
    }
  }
  EXPECT_EQ(wrong_peers, 0) << "rank " << rank;
  // Another range of the same allocation: served by the same export.
  auto second = comm.registerBuffer(allocation + 2 * kOffset + kRegistrationHwBytes, 4096);
  EXPECT_TRUE(second.isOk()) << second.status().toString();
  const RegistrationStats after = comm.registrationStats();
  const bool reused = after.exports == before.exports + 1 && after.hits == before.hits + 1;
  EXPECT_TRUE(reused) << "exports " << before.exports << " -> " << after.exports << ", hits " << before.hits << " -> "
                      << after.hits;
  if (second.isOk()) {
    EXPECT_TRUE(comm.deregisterBuffer(*second).isOk());
  }
  if (reg.isOk()) {
    EXPECT_TRUE(comm.deregisterBuffer(*reg).isOk());
  }

  // Host memory cannot be shared through IPC: refused on every rank, naming what to do.
  std::vector<std::byte> host(4096);
  auto refused = comm.registerBuffer(host.data(), host.size());
  const bool named = !refused.isOk() && refused.status().message().find("device memory") != std::string::npos;
  EXPECT_TRUE(named) << refused.status().toString();
  (void)hipFree(allocation);
  EXPECT_TRUE(w.allRanksAgree(ok && wrong_peers == 0 && reused && named));
}

}  // namespace
}  // namespace peerreduce::testing
