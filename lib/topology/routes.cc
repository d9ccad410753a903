#include "topology/routes.h"

#include <algorithm>
#include <set>

namespace peerreduce {
namespace {

// Tree rooted at `root` by breadth-first search; height -1 if some rank is unreachable.
SpanningTree breadthFirstTree(const Topology& topology, int root) {
  const int n = topology.worldSize();
  SpanningTree tree;
  tree.root = root;
  tree.parent.assign(static_cast<std::size_t>(n), -2);
  tree.children.assign(static_cast<std::size_t>(n), {});
  std::vector<int> depth(static_cast<std::size_t>(n), 0);
  std::vector<int> queue = {root};
  tree.parent[static_cast<std::size_t>(root)] = -1;
  for (std::size_t head = 0; head < queue.size(); ++head) {  // each rank enters the queue once
    const int v = queue[head];
    for (int w = 0; w < n; ++w) {
      if (w == v || tree.parent[static_cast<std::size_t>(w)] != -2 || !usablePair(topology, v, w)) continue;
      tree.parent[static_cast<std::size_t>(w)] = v;
      tree.children[static_cast<std::size_t>(v)].push_back(w);
      depth[static_cast<std::size_t>(w)] = depth[static_cast<std::size_t>(v)] + 1;
      tree.height = std::max(tree.height, depth[static_cast<std::size_t>(w)]);
      queue.push_back(w);
    }
  }
  if (static_cast<int>(queue.size()) != n) tree.height = -1;
  return tree;
}

// Depth-first search for a Hamiltonian cycle using only links at least `min_gbps` fast.
class CycleSearch {
 public:
  CycleSearch(const Topology& topology, double min_gbps, std::uint64_t budget)
      : topology_(topology),
        n_(topology.worldSize()),
        min_gbps_(min_gbps),
        budget_(budget),
        visited_(static_cast<std::size_t>(n_), false) {}

  std::optional<std::vector<int>> run() {
    path_ = {0};
    visited_[0] = true;
    if (extend()) return path_;
    return std::nullopt;
  }

 private:
  bool edge(int a, int b) const {
    return usablePair(topology_, a, b) && topology_.link(a, b).bandwidth_gbps >= min_gbps_ &&
           topology_.link(b, a).bandwidth_gbps >= min_gbps_;
  }
  int freeDegree(int v) const {
    int degree = 0;
    for (int w = 0; w < n_; ++w) degree += (!visited_[static_cast<std::size_t>(w)] && edge(v, w)) ? 1 : 0;
    return degree;
  }
  bool extend() {
    if (spent_++ >= budget_) return false;
    const int here = path_.back();
    if (static_cast<int>(path_.size()) == n_) return n_ <= 2 ? (n_ == 1 || edge(here, 0)) : edge(here, 0);
    // Warnsdorff's rule: try the neighbour with the fewest free neighbours first; ties by rank.
    std::vector<std::pair<int, int>> next;
    for (int w = 0; w < n_; ++w) {
      if (!visited_[static_cast<std::size_t>(w)] && edge(here, w)) next.emplace_back(freeDegree(w), w);
    }
    std::sort(next.begin(), next.end());
    for (const auto& [degree, w] : next) {
      visited_[static_cast<std::size_t>(w)] = true;
      path_.push_back(w);
      if (extend()) return true;
      path_.pop_back();
      visited_[static_cast<std::size_t>(w)] = false;
      if (spent_ >= budget_) return false;
    }
    return false;
  }

  const Topology& topology_;
  int n_;
  double min_gbps_;
  std::uint64_t budget_;
  std::uint64_t spent_ = 0;
  std::vector<bool> visited_;
  std::vector<int> path_;
};

}  // namespace

bool usablePair(const Topology& topology, int a, int b) {
  return a == b || (topology.link(a, b).connected() && topology.link(b, a).connected());
}

std::vector<std::vector<int>> connectedComponents(const Topology& topology) {
  const int n = topology.worldSize();
  std::vector<int> component(static_cast<std::size_t>(n), -1);
  std::vector<std::vector<int>> groups;
  for (int start = 0; start < n; ++start) {
    if (component[static_cast<std::size_t>(start)] >= 0) continue;
    const SpanningTree tree = breadthFirstTree(topology, start);
    std::vector<int> group;
    for (int r = 0; r < n; ++r) {
      if (tree.parent[static_cast<std::size_t>(r)] != -2 && component[static_cast<std::size_t>(r)] < 0) {
        component[static_cast<std::size_t>(r)] = static_cast<int>(groups.size());
        group.push_back(r);
      }
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

Status checkConnected(const Topology& topology) {
  const auto groups = connectedComponents(topology);
  if (groups.size() <= 1) return Status::ok();
  std::string unreachable;
  for (std::size_t g = 1; g < groups.size(); ++g) {
    for (int r : groups[g]) unreachable += (unreachable.empty() ? "" : ",") + std::to_string(r);
  }
  const bool one = groups.size() == 2 && groups[1].size() == 1;
  return unavailableError((one ? "rank " : "ranks ") + unreachable +
                          " cannot be reached from rank 0, directly or through other ranks (" +
                          std::to_string(groups.size()) + " disconnected groups in " + topology.describe() +
                          "); allow host-staged links or remove them from the link mask");
}

Status checkMaskKeepsConnected(const Topology& unmasked, const Topology& masked, const std::string& mask,
                               const std::string& source) {
  const Status cut = checkConnected(masked);
  // Host-staged entries add links, so a mask may connect a machine that has no peer access of its own.
  if (cut.isOk()) return cut;
  PR_RETURN_IF_ERROR(checkConnected(unmasked));
  return invalidArgumentError("link mask '" + mask.substr(0, 64) + (mask.size() > 64 ? "...' (" : "' (") + source +
                              ") disconnects a connected world: " + cut.message());
}

std::optional<std::vector<int>> findHamiltonianCycle(const Topology& topology, std::uint64_t budget) {
  const int n = topology.worldSize();
  if (n == 1) return std::vector<int>{0};
  // Distinct bandwidths of usable links, fastest first: each is a threshold to try.
  std::set<double, std::greater<>> speeds;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b && usablePair(topology, a, b))
        speeds.insert(std::min(topology.link(a, b).bandwidth_gbps, topology.link(b, a).bandwidth_gbps));
    }
  }
  // The fastest few speed classes first, then every usable link: a bounded number of bounded searches.
  constexpr int kFastThresholds = 3;
  int tried = 0;
  for (double threshold : speeds) {
    if (tried++ == kFastThresholds) break;
    if (auto cycle = CycleSearch(topology, threshold, budget).run()) return cycle;
  }
  if (speeds.empty()) return std::nullopt;
  return CycleSearch(topology, *speeds.rbegin(), budget).run();
}

StatusOr<SpanningTree> treeFromParents(const std::vector<int>& parent) {
  const int n = static_cast<int>(parent.size());
  SpanningTree tree;
  tree.parent = parent;
  tree.children.assign(static_cast<std::size_t>(n), {});
  tree.root = -1;
  for (int r = 0; r < n; ++r) {
    const int p = parent[static_cast<std::size_t>(r)];
    if (p == -1) {
      if (tree.root != -1)
        return invalidArgumentError("tree has two roots, " + std::to_string(tree.root) + " and " + std::to_string(r));
      tree.root = r;
    } else if (p < 0 || p >= n || p == r) {
      return invalidArgumentError("tree parent of rank " + std::to_string(r) + " is " + std::to_string(p));
    } else {
      tree.children[static_cast<std::size_t>(p)].push_back(r);
    }
  }
  if (tree.root < 0) return invalidArgumentError("tree has no root (a rank with parent -1)");
  // Every rank must reach the root without a cycle: walk up at most n steps from each.
  for (int r = 0; r < n; ++r) {
    int v = r;
    int depth = 0;
    while (v != tree.root && depth <= n) {
      v = parent[static_cast<std::size_t>(v)];
      ++depth;
    }
    if (v != tree.root) return invalidArgumentError("tree parents form a cycle through rank " + std::to_string(r));
    tree.height = std::max(tree.height, depth);
  }
  return tree;
}

StatusOr<SpanningTree> shallowestSpanningTree(const Topology& topology) {
  PR_RETURN_IF_ERROR(checkConnected(topology));
  std::optional<SpanningTree> best;
  for (int root = 0; root < topology.worldSize(); ++root) {
    SpanningTree tree = breadthFirstTree(topology, root);
    if (!best || tree.height < best->height) best = std::move(tree);
  }
  return *best;
}

}  // namespace peerreduce
