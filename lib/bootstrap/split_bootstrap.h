// The bootstraps of the children of a split (prCommSplit), carried over the parent's bootstrap.
//
// A child's ranks can only meet through the parent's bootstrap, whose every collective needs every parent
// rank. So each parent rank holds one SplitRounds for the split, and every collective of any child
// becomes one *round* of the parent: all parent ranks all-gather a header (state, color, the child
// collective's number, payload length), then, when some rank carries a payload, the payloads padded to the
// longest. A rank reads only its own child's blocks out of the round. Children of different sizes or
// speeds need different numbers of rounds, so a rank whose child is made (or failed) calls finish(): it
// keeps answering rounds with an empty "finished" header until every parent rank is finished; nothing
// waits for a rank that has left, because a member that finished makes its child's next collective fail
// at once (kUnavailable naming it) instead of hanging.
//
// Lifetime: a SplitRounds uses the parent's bootstrap only until detach(); afterwards a child's
// SplitBootstrap forwards to the bootstrap it was handed then (a simulated child's own world), or refuses
// with kUnsupported. So a child never needs its parent after the split.
//
// Thread safety: one thread per parent rank, as for any Bootstrap.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "peerreduce/bootstrap.h"
#include "peerreduce/status.h"

namespace peerreduce {

// Rounds a split may take in all: creation needs a few dozen collectives, so hitting this means ranks
// disagree about what they are doing; it bounds finish()'s loop.
inline constexpr int kMaxSplitRounds = 4096;
// Longest payload of one child collective: bootstrap records are a few KiB; a larger length in a header
// means a corrupt or foreign message, refused before anything of that size is allocated.
inline constexpr std::uint64_t kMaxSplitPayloadBytes = std::uint64_t{64} << 20;

class SplitRounds {
 public:
  // `parent`: this rank's bootstrap of the parent world; `color`: this rank's child (negative: none).
  SplitRounds(std::shared_ptr<Bootstrap> parent, int color);

  // One collective of this rank's child, whose members are `members` (parent ranks in child rank order).
  // `sequence` is the child collective's number; every member must be at the same one.
  Status childAllGather(std::span<const int> members, std::uint32_t sequence, std::span<const std::byte> mine,
                        std::span<std::byte> all, std::chrono::milliseconds timeout);

  // Takes part in rounds, contributing nothing, until every parent rank has finished (at most
  // kMaxSplitRounds rounds, each bounded by `timeout`). Every parent rank calls it once, last.
  Status finish(std::chrono::milliseconds timeout);

  // Lets go of the parent's bootstrap: later rounds are refused.
  void detach() { parent_.reset(); }
  bool attached() const { return parent_ != nullptr; }

 private:
  struct Header;
  // One round: every parent rank's header and, when any carries one, payload (`width` bytes per rank).
  Status round(const Header& mine, std::span<const std::byte> payload, std::vector<Header>& headers,
               std::vector<std::byte>& payloads, std::uint64_t& width, std::chrono::milliseconds timeout);

  std::shared_ptr<Bootstrap> parent_;
  int color_;
  int rounds_ = 0;
  Status broken_;  // a parent collective failed: every later round fails the same way
};

// Rank `rank` of a child of a split: its collectives are rounds of `rounds` until the split detaches,
// then go to `after`.
class SplitBootstrap final : public Bootstrap {
 public:
  SplitBootstrap(std::shared_ptr<SplitRounds> rounds, std::vector<int> members, int rank);

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(members_.size()); }
  Status allGather(std::span<const std::byte> mine, std::span<std::byte> all,
                   std::chrono::milliseconds timeout) override;

  // Called once the split is over (rounds detached): later collectives go to `after`, the child's own
  // bootstrap (its rank and size must be this one's), or, when null, are refused with kUnsupported.
  void detach(std::shared_ptr<Bootstrap> after);

 private:
  std::shared_ptr<SplitRounds> rounds_;
  std::vector<int> members_;
  int rank_;
  std::uint32_t sequence_ = 0;
  std::shared_ptr<Bootstrap> after_;
};

}  // namespace peerreduce
