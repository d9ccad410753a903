// The communicator side of recovery (peerreduce/recovery.h): the failure report from the transport's
// detector, the agreement over a bootstrap, and the shrunk communicator.
#include <algorithm>
#include <cstring>

#include "api/communicator_impl.h"
#include "bootstrap/rank_agreement.h"
#include "peerreduce/communicator.h"
#include "peerreduce/recovery.h"

namespace peerreduce {
namespace {

// A report on the wire: the reporter, the ranks it lost and the peers whose link to it died, as masks
// (a world has at most 64 ranks).
struct WireReport {
  std::int64_t rank;
  std::uint64_t lost;
  std::uint64_t dead_peers;
};
static_assert(kMaxWorldSize <= 64, "reports encode ranks as 64-bit masks");

std::string rankName(int rank) { return "rank " + std::to_string(rank); }

}  // namespace

FailureReport Communicator::failureReport() const {
  FailureReport report;
  report.rank = impl_->rank;
  const Transport& transport = *impl_->transport;
  for (int peer = 0; peer < impl_->size; ++peer) {
    const PeerHealth health = transport.peerHealth(peer);
    if (peer == impl_->rank) {
      if (health == PeerHealth::kLost) report.lost_ranks.push_back(peer);
      continue;
    }
    // Heartbeats travel over links: a rank has evidence only about the peers it is linked to.
    if (!impl_->topology.link(impl_->rank, peer).connected() && !impl_->topology.link(peer, impl_->rank).connected()) {
      continue;
    }
    if (health == PeerHealth::kLost) report.lost_ranks.push_back(peer);
    if (health == PeerHealth::kLinkDown) report.dead_links.emplace_back(impl_->rank, peer);
  }
  return report;
}

StatusOr<FailureDecision> agreeOnFailures(Bootstrap& bootstrap, const Topology& topology, const FailureReport& mine,
                                          std::chrono::milliseconds timeout) {
  const int n = bootstrap.size();
  const int me = bootstrap.rank();
  if (topology.worldSize() != n) {
    return invalidArgumentError(rankName(me) + ": agreement over a bootstrap of " + std::to_string(n) +
                                " ranks with a topology of " + std::to_string(topology.worldSize()));
  }
  if (mine.rank != me) {
    return invalidArgumentError(rankName(me) + " passed the failure report of rank " + std::to_string(mine.rank));
  }
  WireReport wire{me, 0, 0};
  for (int lost : mine.lost_ranks) {
    if (lost < 0 || lost >= n)
      return invalidArgumentError(rankName(me) + " reports losing rank " + std::to_string(lost) +
                                  ", outside the world");
    wire.lost |= std::uint64_t{1} << lost;
  }
  for (const auto& [a, b] : mine.dead_links) {
    const int peer = a == me ? b : (b == me ? a : -1);
    if (peer < 0 || peer >= n || peer == me) {
      return invalidArgumentError(rankName(me) + " reports link " + std::to_string(a) + "-" + std::to_string(b) +
                                  " dead; a rank reports only links at its own end, to ranks of the world");
    }
    wire.dead_peers |= std::uint64_t{1} << peer;
  }
  PR_ASSIGN_OR_RETURN(const std::vector<WireReport> all, RankAgreement(bootstrap, timeout).gather(wire));
  // Every rank now holds every report. A rank some report names lost (a peer's detector, or its own)
  // relays nothing: the agreement runs over the others' reports, as if the lost ranks had sent none.
  std::uint64_t lost = 0;
  for (int r = 0; r < n; ++r) {
    const WireReport& w = all[static_cast<std::size_t>(r)];
    const std::uint64_t outside = n == 64 ? 0 : ~((std::uint64_t{1} << n) - 1);
    if (w.rank != r || (w.lost & outside) || (w.dead_peers & outside) || (w.dead_peers >> r & 1u)) {
      return corruptError(rankName(me) + ": the failure report received from rank " + std::to_string(r) +
                          " is malformed");
    }
    lost |= w.lost;
  }
  std::vector<FailureReport> reports;
  for (int r = 0; r < n; ++r) {
    const WireReport& w = all[static_cast<std::size_t>(r)];
    if (lost >> r & 1u) continue;
    FailureReport report;
    report.rank = r;
    for (int p = 0; p < n; ++p) {
      if (w.lost >> p & 1u) report.lost_ranks.push_back(p);
      if (w.dead_peers >> p & 1u) report.dead_links.emplace_back(r, p);
    }
    reports.push_back(std::move(report));
  }
  PR_ASSIGN_OR_RETURN(std::vector<FailureDecision> decisions, agreeOnFailures(topology, reports));
  for (const FailureDecision& d : decisions) {
    if (d.rank == me) return d;
  }
  // A failed rank learns the decision of the largest group: it is not among the survivors, which is
  // what it needs to know.
  const FailureDecision* chosen = largestGroup(decisions);
  FailureDecision out;
  if (chosen) out = *chosen;
  out.rank = me;
  if (!chosen) {
    for (int r = 0; r < n; ++r) out.failed.push_back(r);
  }
  return out;
}

StatusOr<std::unique_ptr<Communicator>> shrinkCommunicator(const Communicator& old, const FailureDecision& decision,
                                                           std::shared_ptr<Bootstrap> bootstrap,
                                                           std::shared_ptr<Transport> transport) {
  const int me = old.rank();
  if (decision.rank != me) {
    return invalidArgumentError(rankName(me) + " was given the failure decision of rank " +
                                std::to_string(decision.rank));
  }
  const auto self = std::find(decision.survivors.begin(), decision.survivors.end(), me);
  if (self == decision.survivors.end()) {
    return peerLostError(rankName(me) + " was declared failed by the agreement (survivors: " +
                         std::to_string(decision.survivors.size()) + " of " + std::to_string(old.size()) +
                         "); it is not part of the shrunk world");
  }
  const int new_rank = static_cast<int>(self - decision.survivors.begin());
  PR_ASSIGN_OR_RETURN(ShrinkPlan plan, planShrink(old.topology(), decision));
  const int m = static_cast<int>(plan.old_rank.size());
  if (!bootstrap || !transport) {
    return invalidArgumentError(rankName(me) + ": shrink needs the new world's bootstrap and transport (one is null)");
  }
  // Every pair the shrunk topology lacks (masked before, or dead now) stays masked in the new world,
  // so a transport that would still see the link (a GPU probe) does not bring it back; every pair that
  // was host-staged stays host-staged (host:A-B), so the new world runs over the links the old one did.
  // A world with no peer access left says so in one entry (host:all) rather than one per pair.
  Config config = old.config();
  auto hostStaged = [&](int a, int b) {
    return plan.topology.link(a, b).link_class == LinkClass::kHostStaged &&
           plan.topology.link(b, a).link_class == LinkClass::kHostStaged;
  };
  auto linked = [&](int a, int b) {
    return plan.topology.link(a, b).connected() && plan.topology.link(b, a).connected();
  };
  bool every_link_host_staged = true;
  for (int a = 0; a < m; ++a) {
    for (int b = a + 1; b < m; ++b)
      every_link_host_staged = every_link_host_staged && (!linked(a, b) || hostStaged(a, b));
  }
  std::string mask = every_link_host_staged && m > 1 ? "host:all" : "";
  for (int a = 0; a < m; ++a) {
    for (int b = a + 1; b < m; ++b) {
      const std::string pair = std::to_string(a) + "-" + std::to_string(b);
      if (!linked(a, b)) {
        mask += (mask.empty() ? "" : ",") + pair;
      } else if (hostStaged(a, b) && !every_link_host_staged) {
        mask += (mask.empty() ? "host:" : ",host:") + pair;
      }
    }
  }
  config.link_mask = mask;
  return Communicator::create(new_rank, m, std::move(bootstrap), std::move(transport), config);
}

}  // namespace peerreduce
