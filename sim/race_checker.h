// RaceChecker: happens-before checking of the simulator's accesses to symmetric memory.
//
// Every rank carries a vector clock; a signal carries the sender's clock and a satisfied wait joins it
// (so happens-before is exactly what the executed signals and waits established). For every scratch
// access the checker keeps, per owner, operation and slot, the last write and each rank's last read,
// and reports an access that is not ordered after a conflicting one:
// - a read not ordered after the write it reads (the reader did not wait for the writer's signal),
// - a write not ordered after an earlier read or write of the same memory (overwriting what a peer
//   may still be reading),
// - across operations, any conflicting pair in the same rank's scratch (slot sizes differ between
//   operations, so the whole scratch counts as one location between operations).
// Unlike a check of the values, this catches a missing wait even when the interleaving happened to
// run the writer first. Shadow state is kept for the last kShadowOperations operations per owner.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace peerreduce::sim {

using VectorClock = std::vector<std::uint32_t>;

struct AccessSite {
  int rank = -1;            // who accessed
  std::uint32_t clock = 0;  // the accessor's own clock entry at the access
  std::uint64_t op = 0;     // operation sequence number
  int step = -1;            // step index in that operation's program
};

class RaceChecker {
 public:
  // Describes an access site for a report ("rank 2 op 5 step #7 (reduce c0 [...])").
  using Describer = std::function<std::string(const AccessSite&)>;

  RaceChecker(int world_size, Describer describe);

  VectorClock& clock(int rank) { return clocks_[static_cast<std::size_t>(rank)]; }
  void tick(int rank) { clocks_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(rank)] += 1; }
  void join(int rank, const VectorClock& other);

  void read(int rank, std::uint64_t op, int step, int owner, int slot);
  void write(int rank, std::uint64_t op, int step, int owner, int slot);

  const std::vector<std::string>& reports() const { return reports_; }
  void clearReports() { reports_.clear(); }

 private:
  static constexpr std::size_t kShadowOperations = 8;  // operations in flight at once, with room to spare
  static constexpr std::size_t kMaxReports = 64;       // the first ones explain the bug; the rest repeat it

  struct SlotShadow {
    int slot = 0;
    AccessSite last_write;
    std::vector<AccessSite> last_read;  // per reader rank
  };
  struct OperationShadow {
    std::uint64_t op = 0;
    std::vector<SlotShadow> slots;
    std::vector<AccessSite> any_read;   // per reader: last read of any slot in this operation
    std::vector<AccessSite> any_write;  // per writer: last write of any slot in this operation
  };

  OperationShadow& shadow(int owner, std::uint64_t op);
  SlotShadow& slot(OperationShadow& shadow, int slot);
  bool ordered(const AccessSite& earlier, int rank) const;
  void report(const char* what, const AccessSite& now, const AccessSite& before, int owner, int slot);

  int world_size_;
  Describer describe_;
  std::vector<VectorClock> clocks_;
  std::vector<std::deque<OperationShadow>> owners_;
  std::vector<std::string> reports_;
};

}  // namespace peerreduce::sim
