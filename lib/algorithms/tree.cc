// Tree (relay): for worlds where not every pair of ranks is linked. Along a spanning tree of the
// usable links, each rank reduces its own input with its children's partial results (its own first,
// then children in rank order) and hands the partial to its parent; the root finalises, and the result
// flows back down, each rank copying its parent's. Data between ranks two or more hops apart is
// relayed by the ranks between them. The buffer moves in `pipeline` chunks so that several tree levels
// work at once on large messages. 2 x height latencies; each rank reads count bytes per child and
// count bytes from its parent.
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "plan/plan_builder.h"

namespace peerreduce {
namespace {
constexpr int kTreeUpFlag = kFirstAlgorithmFlag;  // child -> parent: "my partial of the next chunk is ready"
constexpr int kTreeDownFlag = kTreeUpFlag + 1;    // parent -> child: "the result of the next chunk is ready"
constexpr int kTreeNumFlags = kTreeDownFlag + 1;

// Ranks ordered so that every child comes before its parent.
std::vector<int> postOrder(const SpanningTree& tree) {
  std::vector<int> order;
  std::vector<std::pair<int, std::size_t>> stack = {{tree.root, 0}};
  // Each rank is pushed once and popped once: bounded by 2n iterations.
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    const auto& kids = tree.children[static_cast<std::size_t>(v)];
    if (next < kids.size()) {
      const int child = kids[next++];
      stack.emplace_back(child, 0);
    } else {
      order.push_back(v);
      stack.pop_back();
    }
  }
  return order;
}
}  // namespace

Plan buildTreePlan(const SpanningTree& tree, int pipeline, bool in_place) {
  const int n = static_cast<int>(tree.parent.size());
  if (n == 1) return buildSingleRankPlan(Algorithm::kTree, in_place);
  PlanBuilder b(Algorithm::kTree, n, pipeline, kTreeNumFlags, in_place);
  const std::vector<int> up = postOrder(tree);
  const std::vector<int> down(up.rbegin(), up.rend());  // parents before children
  const int down_base = pipeline;  // slots 0..pipeline-1: partials going up; then results going down
  for (int c = 0; c < pipeline; ++c) {
    for (int v : up) {
      const auto& kids = tree.children[static_cast<std::size_t>(v)];
      for (int child : kids) b.waitForAll(v, child, kTreeUpFlag);
      std::vector<BufferRef> sources = {inputOf(v)};
      for (int child : kids) sources.push_back(scratchOf(child, c));
      const bool root = v == tree.root;
      if (root) {
        b.reduce(v, c, sources, scratchOf(v, down_base + c), true);
      } else if (kids.empty()) {
        b.copy(v, c, inputOf(v), scratchOf(v, c));
        b.signal(v, tree.parent[static_cast<std::size_t>(v)], kTreeUpFlag);
      } else {
        b.reduce(v, c, sources, scratchOf(v, c), false);
        b.signal(v, tree.parent[static_cast<std::size_t>(v)], kTreeUpFlag);
      }
    }
  }
  for (int c = 0; c < pipeline; ++c) {
    for (int v : down) {
      const auto& kids = tree.children[static_cast<std::size_t>(v)];
      if (v != tree.root) {
        const int parent = tree.parent[static_cast<std::size_t>(v)];
        b.waitForAll(v, parent, kTreeDownFlag);
        if (kids.empty()) {
          b.copy(v, c, scratchOf(parent, down_base + c), outputOf(v));
          continue;
        }
        b.copy(v, c, scratchOf(parent, down_base + c), scratchOf(v, down_base + c));
      }
      b.copy(v, c, scratchOf(v, down_base + c), outputOf(v));
      for (int child : kids) b.signal(v, child, kTreeDownFlag);
    }
  }
  return b.finish("tree rooted at " + std::to_string(tree.root) + ", height " + std::to_string(tree.height) + ", " +
                  std::to_string(pipeline) + " pipelined chunk" + (pipeline == 1 ? "" : "s"));
}

}  // namespace peerreduce
