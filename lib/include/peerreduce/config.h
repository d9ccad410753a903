// Config: the settings of a communicator, from code and from PEERREDUCE_* environment variables.
//
// Every rank of a world must use the same settings: creation compares a fingerprint of them across
// ranks and fails with kMismatch otherwise. Environment variables override what code set:
//   PEERREDUCE_ALGO           auto | one-shot | two-shot | ring | recursive-doubling | rabenseifner | tree
//   PEERREDUCE_TIMEOUT_MS     bound on every wait of an operation, 1 .. 86400000 ms
//   PEERREDUCE_BOOTSTRAP_TIMEOUT_MS  least bound on a wait for the other ranks at creation and buffer
//                             registration (default 10000): those waits take the larger of the two
//   PEERREDUCE_SCRATCH_BYTES  scratch per rank, e.g. 33554432, 32M, 32MiB (64 KiB .. 64 GiB)
//   PEERREDUCE_VERIFY_PLANS   1 | 0 | true | false | on | off: run the plan verifier on every plan at creation
//   PEERREDUCE_LINK_MASK      pairs of ranks that must not use their direct link, e.g. "0-1,2-3": the
//                             same partial-connectivity scenario on the simulator and on real GPUs
//   PEERREDUCE_TUNING_FILE    a tuning table (docs/ALGORITHMS.md) whose measured choices override the
//                             cost model where they apply
//   PEERREDUCE_POOL_*, PEERREDUCE_PINNED_LIMIT_BYTES: the memory settings (Config::memory, peerreduce/memory.h)
// docs/SETTINGS.md lists every setting with its range and default (`peerreduce-sim settings` prints the
// same table); the GPU transport's settings and PEERREDUCE_DEBUG are read there too, not stored here.
// A malformed value is a kInvalidArgument error naming the variable, the value and what is accepted; an
// empty variable counts as unset (it leaves what code set, the mask and the tuning file included).
//
// Example:
//   peerreduce::Config config;
//   config.algorithm = peerreduce::Algorithm::kRing;
//   auto effective = peerreduce::Config::fromEnvironment(config);  // env wins over code
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "peerreduce/memory.h"
#include "peerreduce/status.h"
#include "peerreduce/types.h"

namespace peerreduce {

// 30 s: long enough for a loaded machine to finish any single operation, short enough that a lost peer
// is reported while someone is still watching.
inline constexpr std::int64_t kDefaultTimeoutMs = 30000;
// 32 MiB: two-shot and ring need about 2 x the message in scratch, so this carries 16 MiB messages in
// one piece and larger ones in 16 MiB segments, where bandwidth is already saturated on NVLink.
inline constexpr std::size_t kDefaultScratchBytes = std::size_t{32} << 20;
// 64 KiB: room for the 2n slots of 256 bytes that a ring over 64 ranks needs, twice over.
inline constexpr std::size_t kMinScratchBytes = std::size_t{64} << 10;
inline constexpr std::size_t kMaxScratchBytes = std::size_t{64} << 30;  // more than any GPU we target has
inline constexpr std::int64_t kMaxTimeoutMs = 86400000;                 // one day
// Config::device: the device current on the creating thread (NCCL's rule), or the rank's position among
// its machine's ranks modulo the visible devices; any other value is a device ordinal.
inline constexpr int kDeviceCurrent = -1;
inline constexpr int kDeviceOfLocalRank = -2;
inline constexpr int kMaxDeviceOrdinal = 1023;  // above the devices any machine has
// 10 s: the default least bound on a bootstrap exchange (creation, buffer registration). Ranks reach those
// after work of their own that an operation's timeout does not describe (a GPU context, the symmetric
// region, plan verification, under sanitizers on a loaded machine), so bounding them by
// PEERREDUCE_TIMEOUT_MS=1 made creation fail whenever one rank arrived a millisecond after another. Long
// enough for that preparation, short enough that a rank that never arrives is reported while someone is
// watching.
inline constexpr std::int64_t kDefaultBootstrapTimeoutMs = 10000;
// 16384 characters: all 2016 pairs of 64 ranks at 6 characters each fit.
inline constexpr std::size_t kMaxLinkMaskChars = 16384;
// 4095 characters: PATH_MAX (4096 on Linux) less the terminating NUL; a longer path cannot be opened.
inline constexpr std::size_t kMaxTuningFileChars = 4095;

struct Config {
  Algorithm algorithm = Algorithm::kAuto;
  // Each collective's own forced algorithm (kAuto: `algorithm` where the collective has it, else the cost
  // model). Reduce-scatter and all-gather: one-shot, ring, recursive doubling (reduce-scatter's is
  // recursive halving), tree; broadcast: one-shot, two-shot, ring, tree. Others are refused by validate().
  Algorithm reduce_scatter_algorithm = Algorithm::kAuto;
  Algorithm all_gather_algorithm = Algorithm::kAuto;
  Algorithm broadcast_algorithm = Algorithm::kAuto;

  // The field that forces `collective`: `algorithm` for allreduce, the collective's own field otherwise.
  Algorithm& algorithmSettingOf(Collective collective) {
    switch (collective) {
      case Collective::kReduceScatter:
        return reduce_scatter_algorithm;
      case Collective::kAllGather:
        return all_gather_algorithm;
      case Collective::kBroadcast:
        return broadcast_algorithm;
      case Collective::kAllReduce:
        break;
    }
    return algorithm;
  }
  Algorithm algorithmSettingOf(Collective collective) const {
    return const_cast<Config&>(*this).algorithmSettingOf(collective);
  }
  std::chrono::milliseconds timeout{kDefaultTimeoutMs};
  // Each rank's own floor for bootstrap exchanges (not compared across ranks); see bootstrapTimeout().
  std::chrono::milliseconds bootstrap_timeout{kDefaultBootstrapTimeoutMs};
  std::size_t scratch_bytes = kDefaultScratchBytes;
  bool verify_plans = true;
  // Every operation compared with the other ranks' of this machine before it is launched (shared host memory,
  // lib/api/operation_log.h); transports that compare them themselves (the simulator) skip it.
  bool check_operations = true;
  std::string link_mask;    // "A-B,host:C-D": A-B removed, C-D host-staged, both directions; "host:all":
                            // every pair host-staged (topology/link_mask.h; checked at creation)
  std::string tuning_file;  // path of a tuning table; empty = none
  // The GPU of a communicator whose transport the C API or the Python package makes (PEERREDUCE_DEVICE):
  // kDeviceCurrent (the device current on the creating thread, NCCL's rule), kDeviceOfLocalRank (the
  // rank's position among its machine's ranks modulo the visible devices), or an ordinal.
  int device = kDeviceCurrent;
  // A plan file (docs/PLANS.md) for one collective: its plan runs for operations of [plan_min_bytes,
  // plan_max_bytes) (0: no upper bound), and where the tuning table names "user"; sizes as the tuning table
  // counts them. Verified against the agreed links at creation, whatever verify_plans says. Empty = none.
  std::string plan_file;
  std::size_t plan_min_bytes = 0;
  std::size_t plan_max_bytes = 0;
  // The symmetric pool and pinned host memory. scratch_bytes is what an allreduce asks of the pool;
  // creation refuses a pool too small to hold it.
  MemorySettings memory;

  // `base` with the PEERREDUCE_* variables applied. `getenv` is injectable for tests.
  static StatusOr<Config> fromEnvironment(const Config& base,
                                          const std::function<const char*(const char*)>& getenv = nullptr);
  static StatusOr<Config> fromEnvironment();
  // kInvalidArgument naming the first setting out of range.
  Status validate() const;
  // The bound on each bootstrap exchange: the larger of `timeout` and `bootstrap_timeout`. Operations
  // (synchronize, every wait inside a plan) keep `timeout` itself.
  std::chrono::milliseconds bootstrapTimeout() const;
  // Hash of every setting that must agree across ranks.
  std::uint64_t fingerprint() const;
  std::string describe() const;
};

// Parses "1048576", "64K", "32M", "32MiB", "1G" (powers of 1024) with overflow checks.
StatusOr<std::size_t> parseByteSize(const std::string& text);

}  // namespace peerreduce
