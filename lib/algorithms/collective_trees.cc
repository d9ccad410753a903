// Reduce-scatter, all-gather and broadcast along a spanning tree: the relays for worlds where not every
// pair of ranks is linked (data between ranks two or more hops apart passes through the ranks between),
// and broadcast's binomial tree on a full mesh.
//
// Broadcast: chunks flow from the root down the tree, pipelined: a rank copies a chunk from its parent's
// scratch into its own, tells its children, and writes its output; leaves copy straight to their output.
// Reduce-scatter: every rank reduces every block of its input with its children's partials (its own
// first, then children in rank order) and hands the partials up; the root finishes every block, and each
// rank takes from its parent the finished blocks of the ranks below it. One fold order per block.
// All-gather: blocks gather up the tree (each rank collects its subtree's), then every rank takes from its
// parent the blocks outside its subtree. Copies only.
// A tree's depth is its latency count (x2 for reduce-scatter and all-gather); a rank with c children
// reads c x the buffer going up.
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kCollectiveTreesUpFlag =
    kFirstAlgorithmFlag;  // child -> parent: "my partials / subtree's blocks are ready"
constexpr int kCollectiveTreesDownFlag =
    kCollectiveTreesUpFlag + 1;  // parent -> child: "what you take from me is ready"
constexpr int kCollectiveTreesNumFlags = kCollectiveTreesDownFlag + 1;

// Ranks ordered so that every parent comes before its children (breadth first from the root).
std::vector<int> parentsFirst(const SpanningTree& tree) {
  std::vector<int> order = {tree.root};
  for (std::size_t head = 0; head < order.size(); ++head) {  // each rank enters once
    for (int child : tree.children[static_cast<std::size_t>(order[head])]) order.push_back(child);
  }
  return order;
}

// below[v][r]: whether rank r is in v's subtree (v included).
std::vector<std::vector<bool>> subtrees(const SpanningTree& tree, const std::vector<int>& parents_first) {
  const std::size_t n = tree.parent.size();
  std::vector<std::vector<bool>> below(n, std::vector<bool>(n, false));
  for (auto it = parents_first.rbegin(); it != parents_first.rend(); ++it) {
    const auto v = static_cast<std::size_t>(*it);
    below[v][v] = true;
    for (int child : tree.children[v]) {
      for (std::size_t r = 0; r < n; ++r) {
        if (below[static_cast<std::size_t>(child)][r]) below[v][r] = true;
      }
    }
  }
  return below;
}

std::string treeName(const SpanningTree& tree) {
  return "tree rooted at " + std::to_string(tree.root) + ", height " + std::to_string(tree.height);
}
}  // namespace

std::vector<int> binomialTreeParents(int n, int root) {
  std::vector<int> parent(static_cast<std::size_t>(n), -1);
  for (int r = 0; r < n; ++r) {
    const int relative = (r - root + n) % n;
    if (relative == 0) continue;
    int top = 1;  // the highest set bit of `relative`
    while (top * 2 <= relative) top *= 2;
    parent[static_cast<std::size_t>(r)] = (relative - top + root) % n;
  }
  return parent;
}

Plan buildBroadcastTreePlan(const SpanningTree& tree, int pipeline, bool in_place) {
  const int n = static_cast<int>(tree.parent.size());
  if (n == 1) return buildSingleRankPlan(Algorithm::kTree, in_place, Collective::kBroadcast);
  PlanBuilder b(Algorithm::kTree, n, pipeline, kCollectiveTreesNumFlags, in_place, Collective::kBroadcast, tree.root);
  const std::vector<int> order = parentsFirst(tree);
  // Chunk by chunk, parents before children: each wait is emitted after the signal of the chunk it reads
  // and before the next chunk's, so it waits for exactly that chunk (PlanBuilder::waitForAll).
  for (int c = 0; c < pipeline; ++c) {
    for (int v : order) {
      const auto& kids = tree.children[static_cast<std::size_t>(v)];
      if (v == tree.root) {
        b.copy(v, c, inputOf(v), scratchOf(v, c));
        for (int child : kids) b.signal(v, child, kCollectiveTreesDownFlag);
        b.copy(v, c, inputOf(v), outputOf(v));  // in place the same memory: left as it is
        continue;
      }
      const int parent = tree.parent[static_cast<std::size_t>(v)];
      b.waitForAll(v, parent, kCollectiveTreesDownFlag);
      if (kids.empty()) {
        b.copy(v, c, scratchOf(parent, c), outputOf(v));
        continue;
      }
      b.copy(v, c, scratchOf(parent, c), scratchOf(v, c));
      for (int child : kids) b.signal(v, child, kCollectiveTreesDownFlag);
      b.copy(v, c, scratchOf(v, c), outputOf(v));
    }
  }
  return b.finish("broadcast " + treeName(tree) + ", " + std::to_string(pipeline) + " pipelined chunk" +
                  (pipeline == 1 ? "" : "s"));
}

Plan buildReduceScatterTreePlan(const SpanningTree& tree, bool in_place) {
  const int n = static_cast<int>(tree.parent.size());
  if (n == 1) return buildSingleRankPlan(Algorithm::kTree, in_place, Collective::kReduceScatter);
  PlanBuilder b(Algorithm::kTree, n, 1, kCollectiveTreesNumFlags, in_place, Collective::kReduceScatter);
  const std::vector<int> down = parentsFirst(tree);
  const std::vector<int> up(down.rbegin(), down.rend());
  const auto below = subtrees(tree, down);
  // Up: slot `block` holds the rank's partial of that block (the root's: the finished block).
  for (int v : up) {
    const auto& kids = tree.children[static_cast<std::size_t>(v)];
    for (int child : kids) b.waitForAll(v, child, kCollectiveTreesUpFlag);
    for (int block = 0; block < n; ++block) {
      if (kids.empty()) {
        b.copy(v, block, inputOf(v), scratchOf(v, block));
        continue;
      }
      std::vector<BufferRef> sources = {inputOf(v)};
      for (int child : kids) sources.push_back(scratchOf(child, block));
      const bool finished = v == tree.root;
      b.reduce(v, block, sources, finished && block == v ? outputOf(v) : scratchOf(v, block), finished);
    }
    if (v != tree.root) b.signal(v, tree.parent[static_cast<std::size_t>(v)], kCollectiveTreesUpFlag);
  }
  // Down: each rank takes its subtree's finished blocks from its parent (its parent read its partials
  // before signalling, so they may be overwritten) and keeps its own.
  for (int v : down) {
    if (v == tree.root) {
      for (int child : tree.children[static_cast<std::size_t>(v)]) b.signal(v, child, kCollectiveTreesDownFlag);
      continue;
    }
    const int parent = tree.parent[static_cast<std::size_t>(v)];
    const auto& kids = tree.children[static_cast<std::size_t>(v)];
    b.waitForAll(v, parent, kCollectiveTreesDownFlag);
    for (int block = 0; block < n; ++block) {
      if (block == v) {
        b.copy(v, block, scratchOf(parent, block), outputOf(v));
      } else if (below[static_cast<std::size_t>(v)][static_cast<std::size_t>(block)]) {
        b.copy(v, block, scratchOf(parent, block), scratchOf(v, block));
      }
    }
    for (int child : kids) b.signal(v, child, kCollectiveTreesDownFlag);
  }
  return b.finish("reduce-scatter " + treeName(tree));
}

Plan buildAllGatherTreePlan(const SpanningTree& tree, bool in_place) {
  const int n = static_cast<int>(tree.parent.size());
  if (n == 1) return buildSingleRankPlan(Algorithm::kTree, in_place, Collective::kAllGather);
  PlanBuilder b(Algorithm::kTree, n, 1, kCollectiveTreesNumFlags, in_place, Collective::kAllGather);
  const std::vector<int> down = parentsFirst(tree);
  const std::vector<int> up(down.rbegin(), down.rend());
  const auto below = subtrees(tree, down);
  auto in_subtree = [&](int v, int r) { return below[static_cast<std::size_t>(v)][static_cast<std::size_t>(r)]; };
  // Up: slot `block` holds block `block` once the rank has it.
  for (int v : up) {
    b.copy(v, v, inputOf(v), scratchOf(v, v));
    b.copy(v, v, inputOf(v), outputOf(v));  // in place the same memory: the copy leaves it as it is
    for (int child : tree.children[static_cast<std::size_t>(v)]) {
      b.waitForAll(v, child, kCollectiveTreesUpFlag);
      for (int block = 0; block < n; ++block) {
        if (!in_subtree(child, block)) continue;
        b.copy(v, block, scratchOf(child, block), scratchOf(v, block));
        b.copy(v, block, scratchOf(v, block), outputOf(v));
      }
    }
    if (v != tree.root) b.signal(v, tree.parent[static_cast<std::size_t>(v)], kCollectiveTreesUpFlag);
  }
  // Down: every block outside the rank's subtree comes from its parent.
  for (int v : down) {
    const auto& kids = tree.children[static_cast<std::size_t>(v)];
    if (v != tree.root) {
      const int parent = tree.parent[static_cast<std::size_t>(v)];
      b.waitForAll(v, parent, kCollectiveTreesDownFlag);
      for (int block = 0; block < n; ++block) {
        if (in_subtree(v, block)) continue;
        if (kids.empty()) {
          b.copy(v, block, scratchOf(parent, block), outputOf(v));
        } else {
          b.copy(v, block, scratchOf(parent, block), scratchOf(v, block));
          b.copy(v, block, scratchOf(v, block), outputOf(v));
        }
      }
    }
    for (int child : kids) b.signal(v, child, kCollectiveTreesDownFlag);
  }
  return b.finish("all-gather " + treeName(tree));
}

}  // namespace peerreduce
