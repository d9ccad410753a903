// A RapidCheck stateful test of faults and recovery: random sequences of allreduce, fault injection
// (crash, dead link, short stall), heal, abort, agree and shrink, run against a model of which ranks
// and links are alive.
//
// What the model predicts and the test checks:
// - with no permanent fault since the last shrink, every allreduce succeeds with the exact result
//   (short stalls and heals included: they must not break anything);
// - with one, every rank either succeeds with the exact result or fails with a typed error naming a
//   rank; never a wrong result;
// - after abort, every allreduce is refused with kAborted and writes nothing;
// - agreement: every rank decides; a live rank's survivors are its connected component of live ranks
//   over live links; a crashed rank's decision lacks it; dead links among survivors are named;
// - shrink: the largest group goes on, renumbered in old-rank order over the links left, and the next
//   allreduce on it is healthy again.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <set>

#include "faulty_world.h"
#include "topology/generators.h"

namespace peerreduce::testing {
namespace {

using faults::Fault;
using faults::FaultKind;
using Link = std::pair<int, int>;

struct Model {
  int n = 0;
  std::vector<std::vector<bool>> link;  // n x n, symmetric: links of the current world
  std::set<int> crashed;
  std::set<Link> dead;                   // (a, b), a < b
  std::vector<double> pending_stall_us;  // per rank: stalls not yet consumed by an action
  bool aborted = false;
  bool agreed = false;
  int ops = 0;  // allreduces so far (input salt)

  bool healthy() const { return crashed.empty() && dead.empty(); }
  bool live(int r) const { return !crashed.count(r); }
  bool carries(int a, int b) const {
    return link[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] &&
           !dead.count({std::min(a, b), std::max(a, b)});
  }
  // The component of live ranks holding `r` over live links, ascending.
  std::vector<int> component(int r) const {
    std::vector<int> out{r};
    std::set<int> seen{r};
    for (std::size_t k = 0; k < out.size(); ++k) {
      for (int p = 0; p < n; ++p) {
        if (!seen.count(p) && live(p) && carries(out[k], p)) {
          seen.insert(p);
          out.push_back(p);
        }
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // The group that goes on: the largest component (ties: the one holding the lowest rank).
  std::vector<int> largestGroup() const {
    std::vector<int> best;
    for (int r = 0; r < n; ++r) {
      if (!live(r)) continue;
      auto c = component(r);
      if (c.size() > best.size()) best = c;
    }
    return best;
  }
};

struct Sut {
  std::unique_ptr<FaultyWorld> world;
  std::vector<FailureDecision> decisions;
  // What the sequence exercised (tags of the case distribution).
  int allreduces_ok = 0, allreduces_failed = 0, agreements = 0, shrinks = 0, ranks_lost = 0;
};

std::vector<std::vector<std::int32_t>> inputs(int n, std::size_t count, int salt) {
  std::vector<std::vector<std::int32_t>> in(static_cast<std::size_t>(n), std::vector<std::int32_t>(count));
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < count; ++i) {
      in[static_cast<std::size_t>(r)][i] =
          static_cast<std::int32_t>((r + 3) * 7919 + static_cast<int>(i) * 31 + salt * 101);
    }
  }
  return in;
}

bool typedFailure(const Status& s) {
  const ErrorCode c = s.code();
  return (c == ErrorCode::kTimeout || c == ErrorCode::kPeerLost || c == ErrorCode::kLinkDown ||
          c == ErrorCode::kRemoteError) &&
         s.message().find("rank") != std::string::npos;
}

struct AllreduceCmd : rc::state::Command<Model, Sut> {
  std::size_t count = *rc::gen::inRange<std::size_t>(1, 3000);

  void apply(Model& m) const override {
    ++m.ops;
    if (!m.aborted) std::fill(m.pending_stall_us.begin(), m.pending_stall_us.end(), 0.0);
  }
  void run(const Model& m, Sut& sut) const override {
    const auto in = inputs(m.n, count, m.ops);
    std::vector<std::int32_t> expected(count, 0);
    for (const auto& v : in) {
      for (std::size_t i = 0; i < count; ++i) {
        expected[i] =
            static_cast<std::int32_t>(static_cast<std::uint32_t>(expected[i]) + static_cast<std::uint32_t>(v[i]));
      }
    }
    auto out = sut.world->allreduce(in);
    const bool all_ok = std::all_of(out.status.begin(), out.status.end(), [](const Status& st) { return st.isOk(); });
    (all_ok ? sut.allreduces_ok : sut.allreduces_failed) += 1;
    for (int r = 0; r < m.n; ++r) {
      const Status& s = out.status[static_cast<std::size_t>(r)];
      const auto& got = out.result[static_cast<std::size_t>(r)];
      if (m.aborted) {
        RC_ASSERT(s.code() == ErrorCode::kAborted);
        RC_ASSERT(got == in[static_cast<std::size_t>(r)]);  // nothing written
      } else if (m.healthy()) {
        RC_ASSERT(s.isOk());
        RC_ASSERT(got == expected);
      } else if (s.isOk()) {
        RC_ASSERT(got == expected);
      } else {
        RC_ASSERT(typedFailure(s));
      }
    }
  }
  void show(std::ostream& os) const override { os << "allreduce " << count; }
};

struct CrashCmd : rc::state::Command<Model, Sut> {
  int rank;
  std::uint64_t step;
  explicit CrashCmd(const Model& m) : rank(*rc::gen::inRange(0, m.n)), step(*rc::gen::inRange<std::uint64_t>(0, 20)) {}
  void checkPreconditions(const Model& m) const override {
    RC_PRE(!m.aborted);
    RC_PRE(rank < m.n && m.live(rank));
    RC_PRE(m.n - static_cast<int>(m.crashed.size()) > 1);  // someone survives
  }
  void apply(Model& m) const override { m.crashed.insert(rank); }
  void run(const Model&, Sut& sut) const override {
    RC_ASSERT(sut.world->faults().inject(Fault{FaultKind::kCrash, rank, -1, 0, step, 0.0}).isOk());
  }
  void show(std::ostream& os) const override { os << "crash rank " << rank << " after " << step << " actions"; }
};

struct LinkDownCmd : rc::state::Command<Model, Sut> {
  int a, b;
  explicit LinkDownCmd(const Model& m) : a(*rc::gen::inRange(0, m.n)), b(*rc::gen::inRange(0, m.n)) {}
  void checkPreconditions(const Model& m) const override {
    RC_PRE(!m.aborted);
    RC_PRE(a < m.n && b < m.n && a < b);
    RC_PRE(m.carries(a, b));
  }
  void apply(Model& m) const override { m.dead.insert({a, b}); }
  void run(const Model&, Sut& sut) const override {
    RC_ASSERT(sut.world->faults().inject(Fault{FaultKind::kLinkDown, a, b, 0, 0, 0.0}).isOk());
  }
  void show(std::ostream& os) const override { os << "link " << a << "-" << b << " down"; }
};

// Stalls that add up to well under the wait deadline (5000 us): the next operation must still succeed.
struct ShortStallCmd : rc::state::Command<Model, Sut> {
  int rank;
  double us;
  explicit ShortStallCmd(const Model& m) : rank(*rc::gen::inRange(0, m.n)), us(*rc::gen::inRange(1, 1000)) {}
  void checkPreconditions(const Model& m) const override {
    RC_PRE(!m.aborted);
    RC_PRE(rank < m.n);
    RC_PRE(m.pending_stall_us[static_cast<std::size_t>(rank)] + us <= 2500.0);
  }
  void apply(Model& m) const override { m.pending_stall_us[static_cast<std::size_t>(rank)] += us; }
  void run(const Model&, Sut& sut) const override {
    RC_ASSERT(sut.world->faults().inject(Fault{FaultKind::kStall, rank, -1, 0, 0, us}).isOk());
  }
  void show(std::ostream& os) const override { os << "stall rank " << rank << " for " << us << " us"; }
};

struct HealCmd : rc::state::Command<Model, Sut> {
  void run(const Model&, Sut& sut) const override { sut.world->faults().healTransient(); }
  void show(std::ostream& os) const override { os << "heal transient faults"; }
};

struct AbortCmd : rc::state::Command<Model, Sut> {
  void apply(Model& m) const override { m.aborted = true; }
  void run(const Model& m, Sut& sut) const override {
    for (int r = 0; r < m.n; ++r) sut.world->comm(r).abort();
    for (int r = 0; r < m.n; ++r) RC_ASSERT(sut.world->comm(r).aborted());
  }
  void show(std::ostream& os) const override { os << "abort every rank"; }
};

struct AgreeCmd : rc::state::Command<Model, Sut> {
  void checkPreconditions(const Model& m) const override { RC_PRE(m.aborted && !m.agreed); }
  void apply(Model& m) const override { m.agreed = true; }
  void run(const Model& m, Sut& sut) const override {
    auto decided = sut.world->abortAndAgree();
    sut.decisions.clear();
    ++sut.agreements;
    const std::vector<int> group = m.largestGroup();
    for (int r = 0; r < m.n; ++r) {
      const auto& d = decided[static_cast<std::size_t>(r)];
      RC_ASSERT(d.isOk());
      RC_ASSERT(d->rank == r);
      const std::vector<int> want = m.live(r) ? m.component(r) : group;
      RC_ASSERT(d->survivors == want);
      RC_ASSERT(d->survivors.size() + d->failed.size() == static_cast<std::size_t>(m.n));
      for (const Link& l : d->dead_links) RC_ASSERT(m.dead.count(l) == 1u);
      for (const Link& l : m.dead) {
        const bool among = std::binary_search(want.begin(), want.end(), l.first) &&
                           std::binary_search(want.begin(), want.end(), l.second);
        RC_ASSERT(among == (std::find(d->dead_links.begin(), d->dead_links.end(), l) != d->dead_links.end()));
      }
      sut.decisions.push_back(*d);
    }
  }
  void show(std::ostream& os) const override { os << "agree on the failures"; }
};

struct ShrinkCmd : rc::state::Command<Model, Sut> {
  void checkPreconditions(const Model& m) const override { RC_PRE(m.agreed); }
  void apply(Model& m) const override {
    const std::vector<int> group = m.largestGroup();
    Model next;
    next.n = static_cast<int>(group.size());
    next.link.assign(group.size(), std::vector<bool>(group.size(), false));
    for (std::size_t i = 0; i < group.size(); ++i) {
      for (std::size_t j = 0; j < group.size(); ++j) {
        next.link[i][j] = i != j && m.carries(group[i], group[j]);
      }
    }
    next.ops = m.ops;
    next.pending_stall_us.assign(group.size(), 0.0);
    m = next;
  }
  void run(const Model& m, Sut& sut) const override {
    auto shrunk = sut.world->shrink(sut.decisions);
    RC_ASSERT(shrunk.isOk());
    RC_ASSERT((*shrunk)->size() == static_cast<int>(m.largestGroup().size()));
    sut.ranks_lost += m.n - (*shrunk)->size();
    sut.world = std::move(shrunk).value();
    sut.decisions.clear();
    ++sut.shrinks;
  }
  void show(std::ostream& os) const override { os << "shrink to the largest group"; }
};

// A connected world of 2..6 ranks: a ring, a ring with chords, or a full mesh.
Topology drawTopology(int n, int shape) {
  if (shape == 0 || n < 4) return Topology::fullMesh(n);
  Topology t = ringTopology(n);
  if (shape == 2) {
    for (int a = 0; a + n / 2 < n; ++a) t.setBidirectional(a, a + n / 2, Topology::defaultNvLink());
  }
  return t;
}

RC_GTEST_PROP(RecoveryStateMachine, RandomFaultAndRecoverySequencesMatchTheModel, ()) {
  const int n = *rc::gen::inRange(2, 7);
  const int shape = *rc::gen::inRange(0, 3);
  const Topology topology = drawTopology(n, shape);
  Model model;
  model.n = n;
  model.link.assign(static_cast<std::size_t>(n), std::vector<bool>(static_cast<std::size_t>(n), false));
  model.pending_stall_us.assign(static_cast<std::size_t>(n), 0.0);
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      model.link[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = a != b && topology.link(a, b).connected();
    }
  }
  auto world = FaultyWorld::create(topology);
  RC_ASSERT(world.isOk());
  Sut sut;
  sut.world = std::move(world).value();
  rc::state::check(model, sut,
                   rc::state::gen::execOneOfWithArgs<AllreduceCmd, AllreduceCmd, CrashCmd, LinkDownCmd, ShortStallCmd,
                                                     HealCmd, AbortCmd, AgreeCmd, ShrinkCmd, ShrinkCmd>());
  RC_TAG(sut.allreduces_failed > 0 ? "an allreduce failed" : "no allreduce failed");
  RC_TAG(sut.shrinks > 0 ? (sut.ranks_lost > 0 ? "shrank, losing ranks" : "shrank, same ranks") : "no shrink");
  RC_TAG(sut.allreduces_ok > 0 ? "an allreduce succeeded" : "no allreduce succeeded");
}

}  // namespace
}  // namespace peerreduce::testing
