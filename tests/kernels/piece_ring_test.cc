// The streamed pushing kernels' geometry and reuse rule (kernels/piece_ring.h), on CPUs:
// - every block's region holds at least two places, lies inside the ring and apart from every other block's,
//   and every piece fits its place, wherever the host lets an operation stream (gpu/kernel_choice.h,
//   streamsPieces: each block's share of the ring holds two pieces);
// - a model of two ranks running the kernel's loop (kernels/push_kernels.cuh, pushPiecesKernel) for two
//   operations in a row, with the signal numbers the kernel waits for taken from the header, under random
//   interleavings: no piece is overwritten before the peer took it, every piece taken is the one expected, and
//   both ranks finish (no interleaving leaves both waiting);
// - the same loop at three to five ranks (reduce-scatter and all-gather: every rank sends to and takes from
//   every other, each sender in its part of the receiver's ring), where a place is reused after one receiver's
//   signal that follows its taking from every sender;
// - the relayed broadcast past two ranks (the root pushes each receiver a range, each receiver passes its range
//   on to the others): its ranges, and a model of its loops, where the root's reuse waits for a receiver's
//   passing the piece on and a receiver's for the other's signal after it took the piece.
#include "piece_ring.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace peerreduce::gpu {
namespace {

constexpr std::uint64_t kVector = 16;

RC_GTEST_PROP(PieceRing, EveryPieceFitsItsPlaceInsideItsBlocksRegion, ()) {
  const std::uint64_t elem = *rc::gen::element<std::uint64_t>(1, 2, 4, 8);
  const std::uint64_t blocks = *rc::gen::inRange<std::uint64_t>(1, 265);
  const std::uint64_t piece_bytes =
      *rc::gen::oneOf(rc::gen::just<std::uint64_t>(0), rc::gen::just<std::uint64_t>(16),
                      rc::gen::just<std::uint64_t>(32 << 10), rc::gen::inRange<std::uint64_t>(1, 70000));
  // What streamsPieces admits: every block's share holds two pieces of the setting (at least a vector each).
  const std::uint64_t piece_vectors = piece_bytes / kVector > 0 ? piece_bytes / kVector : 1;
  const std::uint64_t region_vectors = 2 * piece_vectors + *rc::gen::inRange<std::uint64_t>(0, 3 * piece_vectors + 5);
  const std::uint64_t ring_bytes =
      blocks * region_vectors * kVector + *rc::gen::inRange<std::uint64_t>(0, blocks * kVector);
  const std::uint64_t n = *rc::gen::inRange<std::uint64_t>(0, 2000000);
  const std::uint64_t ring_elements = ring_bytes / elem;
  std::uint64_t previous_end = 0;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const PieceRing r = streamedPieceRing(n, elem, ring_bytes, piece_bytes, blocks, b);
    RC_ASSERT(r.places >= 2u);
    RC_ASSERT(r.per_piece > 0u);
    RC_ASSERT(r.per_piece % (kVector / elem) == 0u);  // whole vectors
    RC_ASSERT(r.region >= previous_end);              // apart from the block before
    const std::uint64_t end = r.region + r.places * r.per_piece;
    RC_ASSERT(end <= ring_elements);
    previous_end = end;
    // The pieces cover the slice exactly, and each fits its place.
    RC_ASSERT(r.pieces >= 1u);
    RC_ASSERT(r.pieces * r.per_piece >= n);
    if (n > 0) RC_ASSERT((r.pieces - 1) * r.per_piece < n);
    for (std::uint64_t k = 0; k < r.pieces; k += 1 + r.pieces / 64) {
      const std::uint64_t lo = k * r.per_piece;
      const std::uint64_t size = n > lo ? std::min(r.per_piece, n - lo) : 0;
      const std::uint64_t at = placeOfPiece(r, lo, k);
      RC_ASSERT(at >= r.region);
      RC_ASSERT(at + size <= end);
    }
  }
}

TEST(PieceRing, AnOperationThatFitsKeepsEachPieceAtItsOwnOffsetAndNeverWaits) {
  PieceRing fits;
  fits.per_piece = 8192;
  fits.pieces = 7;
  for (std::uint64_t k = 0; k < fits.pieces; ++k) {
    EXPECT_EQ(placeOfPiece(fits, 1000 + k * fits.per_piece, k), 1000 + k * fits.per_piece);
    EXPECT_EQ(placeFreeSignal(fits, k, false), 0u);
    EXPECT_EQ(placeFreeSignal(fits, k, true), 0u);
  }
  const PieceRing ring = streamedPieceRing(1 << 20, 4, 132 * 256 << 10, 32 << 10, 132, 5);
  EXPECT_EQ(ring.per_piece, 8192u) << "32 KiB of fp32";
  EXPECT_EQ(ring.places, 8u) << "256 KiB a block";
  EXPECT_EQ(ring.region, 5u * 65536u);
  EXPECT_EQ(placeOfPiece(ring, 0, 9), ring.region + ring.per_piece) << "piece 9 in place 1";
  EXPECT_EQ(placeFreeSignal(ring, 7, false), 0u) << "the last fresh place";
  EXPECT_EQ(placeFreeSignal(ring, 8, false), 3u) << "after the peer's signal for piece 1 (2 + 1)";
  EXPECT_EQ(placeFreeSignal(ring, 8, true), 2u) << "after a receiver's acknowledgement of piece 0";
  const PieceRing whole = streamedPieceRing(1 << 20, 4, 132 * 256 << 10, 0, 132, 0);
  EXPECT_EQ(whole.places, 2u) << "no piece size: half the region";
}

// A ring for the models: `places` places of four elements, `pieces` pieces a block.
PieceRing modelRing(std::uint64_t places, std::uint64_t pieces) {
  PieceRing ring;
  ring.per_piece = 4;
  ring.places = places;
  ring.pieces = pieces;
  return ring;
}

// Two ranks running pushPiecesKernel's loop for one block, operation after operation. Memory: each rank's slot
// (the places the peer writes) and its counter of the peer's signals. A rank's step runs until it would wait
// or has done one thing; the scheduler picks among the ranks that can move.
struct ModelRank {
  bool sends = true;
  bool receives = true;
  std::uint64_t base = 0;  // the peer's signals counted by earlier operations
  int op = 0;
  int phase = 0;  // 0 entered, 1 wait entered, 2 loop, 3 done with this operation
  std::uint64_t j = 0;
  int sub = 0;  // within iteration j: 0 reuse wait + push, 1 take, 2 signal
};

struct ModelWorld {
  PieceRing ring;
  bool broadcast = false;
  int operations = 2;
  std::uint64_t counter[2] = {0, 0};                  // counter[r]: signals rank r received
  std::vector<std::optional<std::uint64_t>> slot[2];  // slot[r][place]: piece id (op * pieces + k) there
  std::vector<std::uint8_t> taken[2];                 // taken[r][place]: rank r took what is there
  ModelRank ranks[2];
  std::string failure;
};

std::uint64_t idOf(const ModelWorld& w, int op, std::uint64_t k) {
  return static_cast<std::uint64_t>(op) * w.ring.pieces + k;
}

// One move of rank `r`; false when it waits (or is done).
bool step(ModelWorld& w, int r) {
  ModelRank& me = w.ranks[r];
  const int peer = 1 - r;
  const bool acknowledges = !me.sends && w.ring.places != 0;
  const bool acknowledged = !me.receives && w.ring.places != 0;
  if (me.op >= w.operations) return false;
  switch (me.phase) {
    case 0:
      ++w.counter[peer];  // entered
      me.phase = 1;
      return true;
    case 1:
      if (me.sends && w.counter[r] < me.base + 1) return false;
      me.phase = 2;
      me.j = 0;
      me.sub = 0;
      return true;
    case 2: {
      const std::uint64_t j = me.j;
      if (me.sub == 0) {
        if (me.sends && j < w.ring.pieces) {
          const std::uint64_t free_after = placeFreeSignal(w.ring, j, acknowledged);
          if (free_after != 0 && w.counter[r] < me.base + free_after) return false;
          const std::uint64_t place = placeOfPiece(w.ring, 0, j) / w.ring.per_piece;
          if (w.slot[peer][place] && !w.taken[peer][place]) {
            w.failure = "rank " + std::to_string(r) + " overwrote piece " + std::to_string(*w.slot[peer][place]) +
                        " before the peer took it";
            return false;
          }
          w.slot[peer][place] = idOf(w, me.op, j);
          w.taken[peer][place] = 0;
        }
        me.sub = 1;
        return true;
      }
      if (me.sub == 1) {
        if (me.receives && j > 0) {
          if (w.counter[r] < me.base + 1 + j) return false;
          const std::uint64_t place = placeOfPiece(w.ring, 0, j - 1) / w.ring.per_piece;
          if (w.slot[r][place] != idOf(w, me.op, j - 1)) {
            w.failure =
                "rank " + std::to_string(r) + " took the wrong piece for " + std::to_string(idOf(w, me.op, j - 1));
            return false;
          }
          w.taken[r][place] = 1;
          if (acknowledges) ++w.counter[peer];
        }
        me.sub = 2;
        return true;
      }
      if (me.sends && j < w.ring.pieces) ++w.counter[peer];  // ready: piece j
      me.sub = 0;
      if (++me.j > w.ring.pieces) me.phase = 3;
      return true;
    }
    default:  // the operation's end: bases, then the next operation
      me.base += 1 + (me.receives || acknowledged ? w.ring.pieces : 0);
      ++me.op;
      me.phase = 0;
      return true;
  }
}

// Runs both ranks to the end under `seed`'s interleaving; the failure, or empty.
std::string runModel(const PieceRing& ring, bool broadcast, int root, std::uint32_t seed) {
  ModelWorld w;
  w.ring = ring;
  w.broadcast = broadcast;
  for (int r = 0; r < 2; ++r) {
    w.slot[r].assign(ring.places, std::nullopt);
    w.taken[r].assign(ring.places, 0);
    w.ranks[r].sends = !broadcast || r == root;
    w.ranks[r].receives = !broadcast || r != root;
  }
  std::mt19937 random(seed);
  for (int moves = 0; moves < 1000000; ++moves) {
    const int first = static_cast<int>(random() % 2);
    bool moved = false;
    for (int t = 0; t < 2 && !moved; ++t) moved = step(w, (first + t) % 2);
    if (!w.failure.empty()) return w.failure;
    if (!moved) {
      if (w.ranks[0].op >= w.operations && w.ranks[1].op >= w.operations) return "";
      return "both ranks wait (ops " + std::to_string(w.ranks[0].op) + ", " + std::to_string(w.ranks[1].op) + ")";
    }
  }
  return "no end within the move bound";
}

TEST(PieceRing, BothRanksFinishAndNoPieceIsOverwrittenBeforeItIsTaken) {
  for (std::uint64_t places : {2u, 3u, 5u}) {
    for (std::uint64_t pieces : {1u, 2u, 3u, 7u, 20u}) {
      const PieceRing ring = modelRing(places, pieces);
      for (std::uint32_t seed = 1; seed <= 60; ++seed) {
        EXPECT_EQ(runModel(ring, false, 0, seed), "") << places << " places, " << pieces << " pieces, seed " << seed;
        EXPECT_EQ(runModel(ring, true, static_cast<int>(seed % 2), seed), "")
            << "broadcast: " << places << " places, " << pieces << " pieces, seed " << seed;
      }
    }
  }
}

// The model can fail: waiting one signal too few lets a sender overwrite a piece its peer has not taken.
TEST(PieceRing, TheModelCatchesAReuseRuleOneSignalShort) {
  const PieceRing ring = modelRing(2, 12);
  bool caught = false;
  for (std::uint32_t seed = 1; seed <= 200 && !caught; ++seed) {
    ModelWorld w;
    w.ring = ring;
    for (int r = 0; r < 2; ++r) {
      w.slot[r].assign(ring.places, std::nullopt);
      w.taken[r].assign(ring.places, 0);
    }
    // A receiver that acknowledges would allow 2 + last; a sending peer needs 3 + last. Claim the peer
    // acknowledges (one signal short) by making rank 0 a broadcast root whose peer also sends.
    w.ranks[0].receives = true;
    w.ranks[1].receives = true;
    std::mt19937 random(seed);
    for (int moves = 0; moves < 100000 && w.failure.empty(); ++moves) {
      const int r = static_cast<int>(random() % 2);
      ModelRank& me = w.ranks[r];
      // Rank r's sender waits for 2 + last instead of 3 + last before reusing a place.
      if (me.phase == 2 && me.sub == 0 && me.sends && me.j < ring.pieces && me.j >= ring.places) {
        const std::uint64_t short_by_one = placeFreeSignal(ring, me.j, false) - 1;
        if (w.counter[r] < me.base + short_by_one) continue;
        const std::uint64_t place = placeOfPiece(ring, 0, me.j) / ring.per_piece;
        if (w.slot[1 - r][place] && !w.taken[1 - r][place]) w.failure = "overwritten";
        w.slot[1 - r][place] = idOf(w, me.op, me.j);
        w.taken[1 - r][place] = 0;
        me.sub = 1;
        continue;
      }
      step(w, r);
    }
    caught = !w.failure.empty();
  }
  EXPECT_TRUE(caught) << "one signal short, some interleaving overwrites a piece the peer has not taken";
}

// Every sender's part of a receiver's ring: apart, inside the ring, whole vectors, the whole ring at two ranks.
TEST(PieceRing, EverySenderHasAPartOfTheReceiversRingOfItsOwn) {
  EXPECT_EQ(senderPartBytes(32 << 20, 2), std::uint64_t{32} << 20) << "two ranks: the whole ring";
  EXPECT_EQ(senderPart(0, 1), 0);
  EXPECT_EQ(senderPart(1, 0), 0);
  for (int world = 3; world <= 8; ++world) {
    const std::uint64_t ring = (std::uint64_t{32} << 20) + 48;
    const std::uint64_t part = senderPartBytes(ring, world);
    EXPECT_EQ(part % kVector, 0u);
    EXPECT_LE(part * static_cast<std::uint64_t>(world - 1), ring);
    EXPECT_GT((part + kVector) * static_cast<std::uint64_t>(world - 1), ring) << "no more than a vector a part lost";
    for (int receiver = 0; receiver < world; ++receiver) {
      std::vector<int> seen;
      for (int sender = 0; sender < world; ++sender) {
        if (sender == receiver) continue;
        const int at = senderPart(sender, receiver);
        EXPECT_GE(at, 0);
        EXPECT_LT(at, world - 1);
        seen.push_back(at);
      }
      std::sort(seen.begin(), seen.end());
      EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end()) << "two senders in one part";
    }
  }
}

// What the many-rank models share: every rank's count of every peer's signals and the bases its earlier
// operations counted, every receiver's ring (a part per sender) and what it took from each place.
struct RingWorld {
  int world;
  PieceRing ring;
  int operations = 2;
  std::vector<std::vector<std::uint64_t>> counter, base;                     // [receiver][sender]
  std::vector<std::vector<std::vector<std::optional<std::uint64_t>>>> slot;  // [receiver][sender][place]
  std::vector<std::vector<std::vector<std::uint8_t>>> taken;                 // [receiver][sender][place]
  struct Rank {
    int op = 0;
    int phase = 0;  // 0 entered, 1 loop, 2 bases
    std::uint64_t j = 0;
    int sub = 0;
    int peer = 1;  // the k of (r + k) % world within a per-peer sub-step
  };
  std::vector<Rank> ranks;
  std::string failure;

  RingWorld(int n, const PieceRing& r) : world(n), ring(r) {
    const auto size = static_cast<std::size_t>(n);
    counter.assign(size, std::vector<std::uint64_t>(size, 0));
    base = counter;
    slot.assign(size, std::vector<std::vector<std::optional<std::uint64_t>>>(
                          size, std::vector<std::optional<std::uint64_t>>(ring.places, std::nullopt)));
    taken.assign(size, std::vector<std::vector<std::uint8_t>>(size, std::vector<std::uint8_t>(ring.places, 0)));
    ranks.assign(size, Rank{});
  }
  std::uint64_t id(int op, std::uint64_t k) const { return static_cast<std::uint64_t>(op) * ring.pieces + k; }
  std::size_t placeOf(std::uint64_t k) const { return placeOfPiece(ring, 0, k) / ring.per_piece; }
  void signalEveryPeer(int r) {
    for (int q = 0; q < world; ++q) {
      if (q != r) ++counter[static_cast<std::size_t>(q)][static_cast<std::size_t>(r)];
    }
  }
  bool has(int r, int q, std::uint64_t nth) const {
    return counter[static_cast<std::size_t>(r)][static_cast<std::size_t>(q)] >=
           base[static_cast<std::size_t>(r)][static_cast<std::size_t>(q)] + nth;
  }
  std::uint8_t& takenAt(int at, int from, std::size_t place) {
    return taken[static_cast<std::size_t>(at)][static_cast<std::size_t>(from)][place];
  }
  // Sender `from` writes piece `j` of operation `op` into its part of `to`'s ring (a failure over a piece not taken).
  void write(int from, int to, int op, std::uint64_t j) {
    const std::size_t place = placeOf(j);
    auto& there = slot[static_cast<std::size_t>(to)][static_cast<std::size_t>(from)][place];
    if (there && !takenAt(to, from, place)) {
      failure = "rank " + std::to_string(from) + " overwrote piece " + std::to_string(*there) + " at rank " +
                std::to_string(to) + " before it was taken";
      return;
    }
    there = id(op, j);
    takenAt(to, from, place) = 0;
  }
  // Receiver `at` takes piece `j` of operation `op` from `from`'s part; false (a failure) if another is there.
  bool take(int at, int from, int op, std::uint64_t j) {
    const std::size_t place = placeOf(j);
    if (slot[static_cast<std::size_t>(at)][static_cast<std::size_t>(from)][place] != id(op, j)) {
      failure = "rank " + std::to_string(at) + " found the wrong piece from " + std::to_string(from);
      return false;
    }
    takenAt(at, from, place) = 1;
    return true;
  }
  // Rank `r` enters an operation (signals every peer), its loop from piece 0 at peer step `first`.
  bool enter(int r, int first) {
    Rank& me = ranks[static_cast<std::size_t>(r)];
    signalEveryPeer(r);
    me.phase = ring.pieces == 0 ? 2 : 1;
    me.j = 0;
    me.sub = 0;
    me.peer = first;
    return true;
  }
  // Rank `r` ends an operation: every peer sent entered and one signal per piece.
  bool endOperation(int r) {
    for (int q = 0; q < world; ++q) {
      if (q != r) base[static_cast<std::size_t>(r)][static_cast<std::size_t>(q)] += 1 + ring.pieces;
    }
    Rank& me = ranks[static_cast<std::size_t>(r)];
    ++me.op;
    me.phase = 0;
    return true;
  }
};

// Every rank of `world` running pushPiecesKernel's loop for a reduce-scatter or all-gather (every rank sends
// to and takes from every other), one block, operation after operation; each move one wait-or-act of one rank.
// Sub-steps of iteration j: 0 push piece j to each peer, 1 take piece j - 1 from each peer, 2 signal ready.
struct ManyRankModel : RingWorld {
  std::uint64_t reuse_short_by = 0;  // a mutation: the reuse wait this many signals early
  using RingWorld::RingWorld;

  // One move of rank `r`; false when it waits (or is done).
  bool step(int r) {
    Rank& me = ranks[static_cast<std::size_t>(r)];
    if (me.op >= operations) return false;
    if (me.phase == 0) return enter(r, 1);
    if (me.phase == 2) return endOperation(r);
    const std::uint64_t j = me.j;
    const int q = (r + me.peer) % world;
    if (me.sub == 0) {
      if (j < ring.pieces) {
        if (j == 0 && !has(r, q, 1)) return false;
        std::uint64_t free_after = placeFreeSignal(ring, j, false);
        if (free_after != 0) free_after -= reuse_short_by;
        if (free_after != 0 && !has(r, q, free_after)) return false;
        write(r, q, me.op, j);
      }
      if (++me.peer == world || j >= ring.pieces) {
        me.sub = 1;
        me.peer = 1;
      }
      return true;
    }
    if (me.sub == 1) {
      if (j > 0) {
        if (!has(r, q, 1 + j)) return false;
        if (!take(r, q, me.op, j - 1)) return false;
      }
      if (++me.peer == world || j == 0) {
        me.sub = 2;
        me.peer = 1;
      }
      return true;
    }
    if (j < ring.pieces) signalEveryPeer(r);  // ready: piece j
    me.sub = 0;
    if (++me.j > ring.pieces) me.phase = 2;
    return true;
  }
};

// Runs every rank of a many-rank model to the end under `seed`'s interleaving: the failure, or empty.
template <typename Model>
std::string runToTheEnd(Model& m, std::uint32_t seed) {
  std::mt19937 random(seed);
  for (int moves = 0; moves < 4000000; ++moves) {
    const int first = static_cast<int>(random() % static_cast<std::uint32_t>(m.world));
    bool moved = false;
    for (int t = 0; t < m.world && !moved; ++t) moved = m.step((first + t) % m.world);
    if (!m.failure.empty()) return m.failure;
    if (!moved) {
      for (const auto& rank : m.ranks) {
        if (rank.op < m.operations) return "every rank waits";
      }
      return "";
    }
  }
  return "no end within the move bound";
}

std::string runManyRankModel(int world, const PieceRing& ring, std::uint32_t seed, std::uint64_t short_by = 0) {
  ManyRankModel m(world, ring);
  m.reuse_short_by = short_by;
  return runToTheEnd(m, seed);
}

// Every world, ring and interleaving the many-rank models run over: `run(world, ring, seed)`.
template <typename Run>
void forEveryManyRankCase(std::uint32_t seeds, const Run& run) {
  for (int world : {3, 4, 5}) {
    for (std::uint64_t places : {2u, 3u}) {
      for (std::uint64_t pieces : {1u, 2u, 5u, 11u}) {
        for (std::uint32_t seed = 1; seed <= seeds; ++seed) run(world, modelRing(places, pieces), seed);
      }
    }
  }
}

std::string describe(int world, const PieceRing& ring, std::uint32_t seed) {
  return std::to_string(world) + " ranks, " + std::to_string(ring.places) + " places, " + std::to_string(ring.pieces) +
         " pieces, seed " + std::to_string(seed);
}

TEST(PieceRing, AtMoreRanksEveryRankFinishesAndNoPieceIsOverwrittenBeforeItIsTaken) {
  forEveryManyRankCase(25, [](int world, const PieceRing& ring, std::uint32_t seed) {
    EXPECT_EQ(runManyRankModel(world, ring, seed), "") << describe(world, ring, seed);
  });
}

// The many-rank model can fail too: one signal short, some interleaving overwrites a piece not yet taken.
TEST(PieceRing, AtMoreRanksTheModelCatchesAReuseRuleOneSignalShort) {
  const PieceRing ring = modelRing(2, 12);
  bool caught = false;
  for (std::uint32_t seed = 1; seed <= 300 && !caught; ++seed) caught = !runManyRankModel(4, ring, seed, 1).empty();
  EXPECT_TRUE(caught);
}

TEST(PieceRing, RelayedRangesCoverTheBufferInWholeVectorsAndBlocksCutThemAlike) {
  for (std::uint64_t elem : {1u, 2u, 4u, 8u}) {
    for (int world : {3, 4, 8}) {
      for (std::uint64_t count : {0u, 1u, 15u, 16u, 1000u, 4194305u}) {
        const std::uint64_t range = relayRangeElements(count, elem, world);
        EXPECT_EQ(range * elem % kVector, 0u);
        EXPECT_GE(range * static_cast<std::uint64_t>(world - 1), count) << "the ranges cover the buffer";
        if (count > 0) {
          EXPECT_LT((range - kVector / elem) * static_cast<std::uint64_t>(world - 1), count)
              << "no range a vector long";
        }
        for (std::uint64_t blocks : {1u, 7u, 132u}) {
          const std::uint64_t per_block = relayBlockElements(range, elem, blocks);
          EXPECT_EQ(per_block * elem % kVector, 0u);
          EXPECT_GE(per_block * blocks, range);
        }
      }
    }
  }
}

// Every rank of `world` running pushBroadcastRelayKernel's loop, one block, operation after operation.
// `root_short`: a mutation, the root's reuse wait that many signals early; `take_short`: a receiver taking
// another's piece that many signals early. (A receiver's own reuse wait cannot be caught short: it took the
// other's piece j - 1 in its own iteration j - 1, after that one's signal for it, which is the signal the
// wait asks for; the kernel keeps the wait as a guard.) Sub-steps of iteration j: the root 0 pushes piece j
// to each receiver, 1 signals; a receiver 0 waits for the root's piece, 1 passes it on to each other
// receiver, 2 signals, 3 takes each other's piece j.
struct RelayModel : RingWorld {
  int root = 0;
  std::uint64_t root_short = 0;
  std::uint64_t take_short = 0;
  RelayModel(int n, int root_rank, const PieceRing& r) : RingWorld(n, r), root(root_rank) {}

  std::uint64_t freeAfter(std::uint64_t j, bool after_acknowledgement, std::uint64_t short_by) const {
    const std::uint64_t signal = placeFreeSignal(ring, j, after_acknowledgement);
    return signal == 0 ? 0 : signal - short_by;
  }
  // The first peer step of rank `r` (receivers skip the root), and the next after `me`'s; true past the last.
  int firstPeer(int r, bool skip_root) const {
    int k = 1;
    while (k < world && skip_root && (r + k) % world == root) ++k;
    return k;
  }
  bool nextPeer(Rank& me, int r, bool skip_root) {
    do {
      ++me.peer;
    } while (me.peer < world && skip_root && (r + me.peer) % world == root);
    return me.peer >= world;
  }

  bool step(int r) {
    Rank& me = ranks[static_cast<std::size_t>(r)];
    if (me.op >= operations) return false;
    if (me.phase == 0) return enter(r, firstPeer(r, r != root));
    if (me.phase == 2) return endOperation(r);
    const std::uint64_t j = me.j;
    const auto next_piece = [&] {
      me.sub = 0;
      me.peer = firstPeer(r, r != root);
      if (++me.j >= ring.pieces) me.phase = 2;
    };
    const int q = (r + me.peer) % world;
    if (r == root) {
      if (me.sub == 0) {
        if (j == 0 && !has(r, q, 1)) return false;
        const std::uint64_t free_after = freeAfter(j, true, root_short);
        if (free_after != 0 && !has(r, q, free_after)) return false;
        write(r, q, me.op, j);
        if (nextPeer(me, r, false)) me.sub = 1;
        return true;
      }
      signalEveryPeer(r);
      next_piece();
      return true;
    }
    switch (me.sub) {
      case 0:
        if (!has(r, root, 2 + j)) return false;
        if (!take(r, root, me.op, j)) return false;
        takenAt(r, root, placeOf(j)) = 0;  // still reading it until the signal
        me.sub = me.peer < world ? 1 : 2;
        return true;
      case 1: {
        if (j == 0 && !has(r, q, 1)) return false;
        const std::uint64_t free_after = freeAfter(j, false, 0);
        if (free_after != 0 && !has(r, q, free_after)) return false;
        write(r, q, me.op, j);
        if (nextPeer(me, r, true)) me.sub = 2;
        return true;
      }
      case 2:
        takenAt(r, root, placeOf(j)) = 1;  // its reads are done before the signal
        signalEveryPeer(r);
        me.sub = 3;
        me.peer = firstPeer(r, true);
        if (me.peer >= world) next_piece();
        return true;
      default:
        if (!has(r, q, 2 + j - take_short)) return false;
        if (!take(r, q, me.op, j)) return false;
        if (nextPeer(me, r, true)) next_piece();
        return true;
    }
  }
};

std::string runRelayModel(int world, int root, const PieceRing& ring, std::uint32_t seed, std::uint64_t root_short = 0,
                          std::uint64_t take_short = 0) {
  RelayModel m(world, root, ring);
  m.root_short = root_short;
  m.take_short = take_short;
  return runToTheEnd(m, seed);
}

TEST(PieceRing, TheRelayedBroadcastFinishesAndOverwritesNoPieceBeforeItIsTaken) {
  forEveryManyRankCase(20, [](int world, const PieceRing& ring, std::uint32_t seed) {
    const int root = static_cast<int>(seed % static_cast<std::uint32_t>(world));
    EXPECT_EQ(runRelayModel(world, root, ring, seed), "") << "root " << root << ", " << describe(world, ring, seed);
  });
}

// The relay model fails with the root's reuse rule one signal short, and with a receiver taking a piece one
// signal early.
TEST(PieceRing, TheRelayModelCatchesARootReuseOrATakeOneSignalShort) {
  const PieceRing ring = modelRing(2, 12);
  bool root_caught = false;
  bool take_caught = false;
  for (std::uint32_t seed = 1; seed <= 400 && !(root_caught && take_caught); ++seed) {
    if (!root_caught) root_caught = !runRelayModel(4, 1, ring, seed, 1, 0).empty();
    if (!take_caught) take_caught = !runRelayModel(4, 1, ring, seed, 0, 1).empty();
  }
  EXPECT_TRUE(root_caught) << "the root reusing a place before the receiver passed its piece on";
  EXPECT_TRUE(take_caught) << "a receiver taking a piece before the other passed it on";
}

}  // namespace
}  // namespace peerreduce::gpu
