// Reduce-scatter by recursive halving and all-gather by recursive doubling, for any world size.
//
// A world that is not a power of two folds onto its largest power-of-two subset p as allreduce's
// recursive doubling does (PowerOfTwoFold): ranks 2i+1 < 2 x extra hand everything to 2i first (reduce-
// scatter: their whole input, reduced into 2i's, lower rank first; all-gather: their block) and get their
// part back last. Among the p active ranks, virtual rank v answers for its own block and its folded
// partner's ("its blocks"); block b's virtual owner is ownerOf(b).
//
// Reduce-scatter, halving: at distance p/2, p/4, ..., 1 partners v and v^d split the range of blocks they
// still share; each keeps the half whose owners are on its side and reduces the partner's partial of it
// into its own (lower virtual rank first). After log2 p rounds v holds its blocks complete. Every block
// has one expression tree fixed by the plan, so every run gives the same bits. log2 p (+2) latencies and
// (p-1)/p of the buffer read per rank.
// All-gather, doubling: at distance 1, 2, ..., p/2 partners exchange every block they hold, doubling it;
// log2 p (+2) latencies, (n-1) blocks read per rank. Copies only.
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kRecursiveCollectivesDataFlag = kFirstAlgorithmFlag;  // "the blocks my partner needs are in my scratch"
constexpr int kRecursiveCollectivesNumFlags = kRecursiveCollectivesDataFlag + 1;
constexpr int kRecursiveCollectivesChunksPerBlock = 1;  // a step moves one block; scratch slot b holds block b

// The virtual rank that answers for block b during the power-of-two rounds.
int ownerOf(const PowerOfTwoFold& fold, int block) { return block < 2 * fold.extra ? block / 2 : block - fold.extra; }

// The blocks whose virtual owners lie in [first, first + width).
std::vector<int> blocksOwnedIn(const PowerOfTwoFold& fold, int first, int width) {
  std::vector<int> blocks;
  for (int b = 0; b < fold.world_size; ++b) {
    const int owner = ownerOf(fold, b);
    if (owner >= first && owner < first + width) blocks.push_back(b);
  }
  return blocks;
}

std::string foldSuffix(const PowerOfTwoFold& fold) {
  return fold.extra ? " (+" + std::to_string(fold.extra) + " folded)" : std::string();
}
}  // namespace

Plan buildReduceScatterHalvingPlan(int n, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kRecursiveDoubling, in_place, Collective::kReduceScatter);
  const PowerOfTwoFold fold(n);
  const int p = fold.active;
  PlanBuilder b(Algorithm::kRecursiveDoubling, n, kRecursiveCollectivesChunksPerBlock, kRecursiveCollectivesNumFlags,
                in_place, Collective::kReduceScatter);
  // Where each rank's current partial of each block is: its input until it reduced or published it.
  std::vector<std::vector<bool>> in_scratch(static_cast<std::size_t>(n),
                                            std::vector<bool>(static_cast<std::size_t>(n), false));
  auto current = [&](int r, int block) {
    return in_scratch[static_cast<std::size_t>(r)][static_cast<std::size_t>(block)] ? scratchOf(r, block) : inputOf(r);
  };
  // Fold: 2i+1 publishes every block, 2i reduces them into its own (its input first).
  for (int r = 1; r < 2 * fold.extra; r += 2) {
    for (int block = 0; block < n; ++block) b.copy(r, block, inputOf(r), scratchOf(r, block));
    b.signal(r, r - 1, kRecursiveCollectivesDataFlag);
  }
  for (int r = 0; r < 2 * fold.extra; r += 2) {
    b.waitForAll(r, r + 1, kRecursiveCollectivesDataFlag);
    for (int block = 0; block < n; ++block) {
      const BufferRef sources[2] = {inputOf(r), scratchOf(r + 1, block)};
      b.reduce(r, block, sources, scratchOf(r, block), false);
      in_scratch[static_cast<std::size_t>(r)][static_cast<std::size_t>(block)] = true;
    }
  }
  for (int distance = p / 2; distance >= 1; distance /= 2) {
    const bool last = distance == 1;
    // Each rank publishes the half it hands over (already in scratch after the first round) and signals.
    for (int v = 0; v < p; ++v) {
      const int r = fold.rankOfVirtual(v);
      const int partner = v ^ distance;
      for (int block : blocksOwnedIn(fold, partner & ~(distance - 1), distance)) {
        if (in_scratch[static_cast<std::size_t>(r)][static_cast<std::size_t>(block)]) continue;
        b.copy(r, block, inputOf(r), scratchOf(r, block));
        in_scratch[static_cast<std::size_t>(r)][static_cast<std::size_t>(block)] = true;
      }
      b.signal(r, fold.rankOfVirtual(partner), kRecursiveCollectivesDataFlag);
    }
    std::vector<std::vector<bool>> updated = in_scratch;
    for (int v = 0; v < p; ++v) {
      const int r = fold.rankOfVirtual(v);
      const int partner = v ^ distance;
      b.waitForAll(r, fold.rankOfVirtual(partner), kRecursiveCollectivesDataFlag);
      const int lower = fold.rankOfVirtual(v & ~distance);
      const int upper = fold.rankOfVirtual(v | distance);
      for (int block : blocksOwnedIn(fold, v & ~(distance - 1), distance)) {
        const BufferRef sources[2] = {current(lower, block), current(upper, block)};
        const bool to_output = last && block == r;
        b.reduce(r, block, sources, to_output ? outputOf(r) : scratchOf(r, block), last);
        updated[static_cast<std::size_t>(r)][static_cast<std::size_t>(block)] = !to_output;
      }
    }
    in_scratch = updated;
  }
  // Unfold: 2i holds 2i+1's block complete in its scratch.
  for (int r = 0; r < 2 * fold.extra; r += 2) b.signal(r, r + 1, kRecursiveCollectivesDataFlag);
  for (int r = 1; r < 2 * fold.extra; r += 2) {
    b.waitForAll(r, r - 1, kRecursiveCollectivesDataFlag);
    b.copy(r, r, scratchOf(r - 1, r), outputOf(r));
  }
  return b.finish("reduce-scatter recursive halving over " + std::to_string(p) + " ranks" + foldSuffix(fold));
}

Plan buildAllGatherDoublingPlan(int n, bool in_place) {
  if (n == 1) return buildSingleRankPlan(Algorithm::kRecursiveDoubling, in_place, Collective::kAllGather);
  const PowerOfTwoFold fold(n);
  const int p = fold.active;
  PlanBuilder b(Algorithm::kRecursiveDoubling, n, kRecursiveCollectivesChunksPerBlock, kRecursiveCollectivesNumFlags,
                in_place, Collective::kAllGather);
  for (int r = 0; r < n; ++r) {
    b.copy(r, r, inputOf(r), scratchOf(r, r));
    b.copy(r, r, inputOf(r), outputOf(r));  // in place the same memory: the copy leaves it as it is
  }
  // Fold: 2i takes 2i+1's block.
  for (int r = 1; r < 2 * fold.extra; r += 2) b.signal(r, r - 1, kRecursiveCollectivesDataFlag);
  for (int r = 0; r < 2 * fold.extra; r += 2) {
    b.waitForAll(r, r + 1, kRecursiveCollectivesDataFlag);
    b.copy(r, r + 1, scratchOf(r + 1, r + 1), scratchOf(r, r + 1));
    b.copy(r, r + 1, scratchOf(r, r + 1), outputOf(r));
  }
  for (int distance = 1; distance < p; distance *= 2) {
    const bool last = distance * 2 == p;
    for (int v = 0; v < p; ++v)
      b.signal(fold.rankOfVirtual(v), fold.rankOfVirtual(v ^ distance), kRecursiveCollectivesDataFlag);
    for (int v = 0; v < p; ++v) {
      const int r = fold.rankOfVirtual(v);
      const int partner = v ^ distance;
      const int from = fold.rankOfVirtual(partner);
      b.waitForAll(r, from, kRecursiveCollectivesDataFlag);
      // The last round's blocks are read again only by a folded partner.
      const bool keep = !last || fold.foldPartner(r) >= 0;
      for (int block : blocksOwnedIn(fold, partner & ~(distance - 1), distance)) {
        if (keep) {
          b.copy(r, block, scratchOf(from, block), scratchOf(r, block));
          b.copy(r, block, scratchOf(r, block), outputOf(r));
        } else {
          b.copy(r, block, scratchOf(from, block), outputOf(r));
        }
      }
    }
  }
  // Unfold: 2i+1 copies every other block from 2i.
  for (int r = 0; r < 2 * fold.extra; r += 2) b.signal(r, r + 1, kRecursiveCollectivesDataFlag);
  for (int r = 1; r < 2 * fold.extra; r += 2) {
    b.waitForAll(r, r - 1, kRecursiveCollectivesDataFlag);
    for (int block = 0; block < n; ++block) {
      if (block != r) b.copy(r, block, scratchOf(r - 1, block), outputOf(r));
    }
  }
  return b.finish("all-gather recursive doubling over " + std::to_string(p) + " ranks" + foldSuffix(fold));
}

}  // namespace peerreduce
