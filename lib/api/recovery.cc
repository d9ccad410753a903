// Failure agreement among survivors and the shrunk world (peerreduce/recovery.h).
#include "peerreduce/recovery.h"

#include <algorithm>
#include <set>

namespace peerreduce {
namespace {

using Link = std::pair<int, int>;
Link ordered(int a, int b) { return a < b ? Link{a, b} : Link{b, a}; }

// What one rank knows: the reports it has received (by reporter).
struct Knowledge {
  std::set<int> heard;  // reporters
  std::set<int> lost;   // ranks some reporter lost
  std::set<Link> dead;  // links some reporter saw die
};

}  // namespace

StatusOr<std::vector<FailureDecision>> agreeOnFailures(const Topology& topology,
                                                       const std::vector<FailureReport>& reports) {
  const int n = topology.worldSize();
  std::vector<int> index_of(static_cast<std::size_t>(n), -1);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const FailureReport& r = reports[i];
    if (r.rank < 0 || r.rank >= n || index_of[static_cast<std::size_t>(r.rank)] >= 0) {
      return invalidArgumentError("failure report from rank " + std::to_string(r.rank) + " is outside the world of " +
                                  std::to_string(n) + " or repeated");
    }
    index_of[static_cast<std::size_t>(r.rank)] = static_cast<int>(i);
    for (int lost : r.lost_ranks) {
      if (lost < 0 || lost >= n)
        return invalidArgumentError("rank " + std::to_string(r.rank) + " reports losing rank " + std::to_string(lost));
    }
    for (const Link& l : r.dead_links) {
      if (l.first < 0 || l.first >= n || l.second < 0 || l.second >= n || l.first == l.second) {
        return invalidArgumentError("rank " + std::to_string(r.rank) + " reports a link outside the world");
      }
    }
  }
  // A message crosses a link when both ends report (are alive), the topology has it, and neither
  // end reported it dead (a link dead in one direction carries no request-reply traffic).
  std::set<Link> reported_dead;
  for (const FailureReport& r : reports) {
    for (const Link& l : r.dead_links) reported_dead.insert(ordered(l.first, l.second));
  }
  auto carries = [&](int a, int b) {
    return index_of[static_cast<std::size_t>(a)] >= 0 && index_of[static_cast<std::size_t>(b)] >= 0 &&
           topology.link(a, b).connected() && topology.link(b, a).connected() && !reported_dead.count(ordered(a, b));
  };
  std::vector<Knowledge> know(reports.size());
  for (std::size_t i = 0; i < reports.size(); ++i) {
    know[i].heard.insert(reports[i].rank);
    know[i].lost.insert(reports[i].lost_ranks.begin(), reports[i].lost_ranks.end());
    for (const Link& l : reports[i].dead_links) know[i].dead.insert(ordered(l.first, l.second));
  }
  std::vector<int> rounds(reports.size(), 0);
  // Bound: knowledge only grows and a component's diameter is below n, so n rounds suffice.
  for (int round = 1; round <= n; ++round) {
    std::vector<Knowledge> next = know;
    bool changed = false;
    for (std::size_t i = 0; i < reports.size(); ++i) {
      for (std::size_t j = 0; j < reports.size(); ++j) {
        if (i == j || !carries(reports[i].rank, reports[j].rank)) continue;
        const std::size_t before = next[j].heard.size() + next[j].lost.size() + next[j].dead.size();
        next[j].heard.insert(know[i].heard.begin(), know[i].heard.end());
        next[j].lost.insert(know[i].lost.begin(), know[i].lost.end());
        next[j].dead.insert(know[i].dead.begin(), know[i].dead.end());
        if (next[j].heard.size() + next[j].lost.size() + next[j].dead.size() != before) {
          rounds[j] = round;
          changed = true;
        }
      }
    }
    know = std::move(next);
    if (!changed) break;
  }
  std::vector<FailureDecision> out;
  out.reserve(reports.size());
  for (std::size_t i = 0; i < reports.size(); ++i) {
    FailureDecision d;
    d.rank = reports[i].rank;
    d.rounds = rounds[i];
    for (int r : know[i].heard) {
      if (!know[i].lost.count(r)) d.survivors.push_back(r);
    }
    for (int r = 0; r < n; ++r) {
      if (!std::binary_search(d.survivors.begin(), d.survivors.end(), r)) d.failed.push_back(r);
    }
    for (const Link& l : know[i].dead) {
      if (std::binary_search(d.survivors.begin(), d.survivors.end(), l.first) &&
          std::binary_search(d.survivors.begin(), d.survivors.end(), l.second)) {
        d.dead_links.push_back(l);
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

const FailureDecision* largestGroup(const std::vector<FailureDecision>& decisions) {
  const FailureDecision* chosen = nullptr;
  for (const FailureDecision& d : decisions) {
    if (!std::binary_search(d.survivors.begin(), d.survivors.end(), d.rank)) continue;  // a failed rank
    if (!chosen || d.survivors.size() > chosen->survivors.size()) chosen = &d;
  }
  return chosen;
}

bool decisionsAgree(const std::vector<FailureDecision>& decisions, int rank) {
  const FailureDecision* mine = nullptr;
  for (const auto& d : decisions) {
    if (d.rank == rank) mine = &d;
  }
  if (!mine) return false;
  for (const auto& d : decisions) {
    if (!std::binary_search(mine->survivors.begin(), mine->survivors.end(), d.rank)) continue;
    if (d.survivors != mine->survivors || d.failed != mine->failed || d.dead_links != mine->dead_links) return false;
  }
  return true;
}

std::string ShrinkPlan::describe() const {
  std::string out = "survivors";
  for (std::size_t i = 0; i < old_rank.size(); ++i) {
    out += (i == 0 ? " " : ",") + std::to_string(old_rank[i]) + "->" + std::to_string(i);
  }
  return out + " over " + topology.describe();
}

StatusOr<ShrinkPlan> planShrink(const Topology& topology, const FailureDecision& decision) {
  ShrinkPlan plan;
  plan.old_rank = decision.survivors;
  const int m = static_cast<int>(plan.old_rank.size());
  if (m == 0) return invalidArgumentError("rank " + std::to_string(decision.rank) + ": no survivors to shrink to");
  plan.topology = Topology(m);
  plan.topology.setDevice(topology.device());
  for (int a = 0; a < m; ++a) {
    for (int b = 0; b < m; ++b) {
      if (a == b) continue;
      const int oa = plan.old_rank[static_cast<std::size_t>(a)];
      const int ob = plan.old_rank[static_cast<std::size_t>(b)];
      const bool dead = std::binary_search(decision.dead_links.begin(), decision.dead_links.end(), ordered(oa, ob));
      if (!dead) plan.topology.setLink(a, b, topology.link(oa, ob));
    }
  }
  // Every survivor must reach every other (relays allowed): the agreement guarantees it for links
  // both ends saw alive, but a one-way link of the old topology may still leave someone unreachable.
  std::vector<char> seen(static_cast<std::size_t>(m), 0);
  std::vector<int> frontier{0};
  seen[0] = 1;
  for (std::size_t k = 0; k < frontier.size(); ++k) {
    for (int b = 0; b < m; ++b) {
      if (!seen[static_cast<std::size_t>(b)] && plan.topology.link(frontier[k], b).connected() &&
          plan.topology.link(b, frontier[k]).connected()) {
        seen[static_cast<std::size_t>(b)] = 1;
        frontier.push_back(b);
      }
    }
  }
  if (static_cast<int>(frontier.size()) != m) {
    std::string missing;
    for (int b = 0; b < m; ++b) {
      if (!seen[static_cast<std::size_t>(b)])
        missing += (missing.empty() ? "" : ",") + std::to_string(plan.old_rank[static_cast<std::size_t>(b)]);
    }
    return unavailableError("rank " + std::to_string(decision.rank) + ": after removing the dead links, survivors " +
                            missing + " cannot be reached; they cannot shrink together");
  }
  return plan;
}

}  // namespace peerreduce
