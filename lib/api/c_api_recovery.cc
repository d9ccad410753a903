// The C API of recovery (peerreduce/recovery.h): failure report, agreement, shrink. Rank sets travel as
// bit masks (bit r: rank r), links as a matrix of masks.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/c_api_internal.h"
#include "api/c_bootstrap_handle.h"
#include "peerreduce/recovery.h"

namespace peerreduce::capi {
namespace {

std::uint64_t bit(int rank) { return std::uint64_t{1} << rank; }

void toC(const FailureReport& report, prFailureReport_t& out) {
  out = prFailureReport_t{};
  out.rank = report.rank;
  for (int r : report.lost_ranks) out.lost_ranks |= bit(r);
  for (const auto& [a, b] : report.dead_links) {
    out.dead_links[a] |= bit(b);
    out.dead_links[b] |= bit(a);
  }
}

// The report in C++ form. Ranks must lie in the world; a link both ways counts once.
StatusOr<FailureReport> fromC(const prFailureReport_t& in, int world_size) {
  if (in.rank < 0 || in.rank >= world_size) {
    return invalidArgumentError("report of rank " + std::to_string(in.rank) + " in a world of " +
                                std::to_string(world_size));
  }
  const std::uint64_t outside = world_size >= PR_MAX_RANKS ? 0 : ~(bit(world_size) - 1);
  if ((in.lost_ranks & outside) != 0) {
    return invalidArgumentError("report of rank " + std::to_string(in.rank) + " names lost ranks outside a world of " +
                                std::to_string(world_size));
  }
  FailureReport report;
  report.rank = in.rank;
  for (int r = 0; r < world_size; ++r) {
    if ((in.lost_ranks & bit(r)) != 0) report.lost_ranks.push_back(r);
  }
  for (int a = 0; a < PR_MAX_RANKS; ++a) {
    const std::uint64_t row = in.dead_links[a];
    if (row == 0) continue;
    if (a >= world_size || (row & outside) != 0) {
      return invalidArgumentError("report of rank " + std::to_string(in.rank) +
                                  " names a dead link outside a world of " + std::to_string(world_size));
    }
    for (int b = a + 1; b < world_size; ++b) {
      if ((row & bit(b)) != 0 || (in.dead_links[b] & bit(a)) != 0) report.dead_links.emplace_back(a, b);
    }
  }
  return report;
}

void toC(const FailureDecision& decision, prFailureDecision_t& out) {
  out = prFailureDecision_t{};
  out.rank = decision.rank;
  for (int r : decision.survivors) out.survivors |= bit(r);
  for (int r : decision.failed) out.failed |= bit(r);
  for (const auto& [a, b] : decision.dead_links) {
    out.dead_links[a] |= bit(b);
    out.dead_links[b] |= bit(a);
  }
  out.rounds = decision.rounds;
}

StatusOr<FailureDecision> fromC(const prFailureDecision_t& in, int world_size) {
  if (in.rank < 0 || in.rank >= world_size) {
    return invalidArgumentError("decision of rank " + std::to_string(in.rank) + " in a world of " +
                                std::to_string(world_size));
  }
  const std::uint64_t outside = world_size >= PR_MAX_RANKS ? 0 : ~(bit(world_size) - 1);
  if (((in.survivors | in.failed) & outside) != 0 || (in.survivors & in.failed) != 0) {
    return invalidArgumentError("decision of rank " + std::to_string(in.rank) +
                                ": survivors and failed must be disjoint sets of ranks of the world");
  }
  FailureDecision decision;
  decision.rank = in.rank;
  decision.rounds = in.rounds;
  for (int r = 0; r < world_size; ++r) {
    if ((in.survivors & bit(r)) != 0) decision.survivors.push_back(r);
    if ((in.failed & bit(r)) != 0) decision.failed.push_back(r);
  }
  for (int a = 0; a < world_size; ++a) {
    for (int b = a + 1; b < world_size; ++b) {
      if ((in.dead_links[a] & bit(b)) != 0 || (in.dead_links[b] & bit(a)) != 0) decision.dead_links.emplace_back(a, b);
    }
  }
  return decision;
}

prResult_t checkBootstrap(const char* function, const char* name, prBootstrap_t bootstrap) noexcept {
  if (bootstrap == nullptr) return nullArgument(function, name, kBootstrapHint);
  if (!liveBootstraps().contains(bootstrap)) return unknownHandle(function, name, kBootstrapHint);
  return prSuccess;
}

}  // namespace
}  // namespace peerreduce::capi

using peerreduce::capi::guarded;
using peerreduce::capi::nullArgument;
using peerreduce::capi::toResult;

extern "C" {

prResult_t prCommFailureReport(prComm_t comm, prFailureReport_t* report) noexcept {
  constexpr const char* kFunction = "prCommFailureReport";
  return guarded(kFunction, [&]() -> prResult_t {
    if (const prResult_t r = peerreduce::capi::checkComm(kFunction, comm); r != prSuccess) return r;
    if (report == nullptr) return nullArgument(kFunction, "report", "pass the address of a prFailureReport_t");
    peerreduce::capi::toC(comm->comm->failureReport(), *report);
    return prSuccess;
  });
}

prResult_t prCommAgreeOnFailures(prComm_t comm, prBootstrap_t bootstrap, const prFailureReport_t* mine,
                                 int64_t timeout_ms, prFailureDecision_t* decision) noexcept {
  constexpr const char* kFunction = "prCommAgreeOnFailures";
  return guarded(kFunction, [&]() -> prResult_t {
    if (const prResult_t r = peerreduce::capi::checkComm(kFunction, comm); r != prSuccess) return r;
    if (const prResult_t r = peerreduce::capi::checkBootstrap(kFunction, "bootstrap", bootstrap); r != prSuccess) {
      return r;
    }
    if (mine == nullptr) return nullArgument(kFunction, "mine", "pass this rank's report (prCommFailureReport)");
    if (decision == nullptr) return nullArgument(kFunction, "decision", "pass the address of a prFailureDecision_t");
    if (timeout_ms < 1) {
      return toResult(kFunction, peerreduce::invalidArgumentError("timeout_ms " + std::to_string(timeout_ms) +
                                                                  " must be at least 1"));
    }
    auto report = peerreduce::capi::fromC(*mine, comm->comm->size());
    if (!report.isOk()) return toResult(kFunction, report.status());
    auto decided = peerreduce::agreeOnFailures(*bootstrap->bootstrap, comm->comm->topology(), *report,
                                               std::chrono::milliseconds(timeout_ms));
    if (!decided.isOk()) return toResult(kFunction, decided.status());
    peerreduce::capi::toC(*decided, *decision);
    return prSuccess;
  });
}

prResult_t prCommShrink(prComm_t comm, const prFailureDecision_t* decision, prBootstrap_t new_bootstrap,
                        prComm_t* newcomm) noexcept {
  constexpr const char* kFunction = "prCommShrink";
  return guarded(kFunction, [&]() -> prResult_t {
    if (newcomm == nullptr) return nullArgument(kFunction, "newcomm", "pass the address of a prComm_t to receive it");
    *newcomm = nullptr;
    if (const prResult_t r = peerreduce::capi::checkComm(kFunction, comm); r != prSuccess) return r;
    if (const prResult_t r = peerreduce::capi::checkBootstrap(kFunction, "new_bootstrap", new_bootstrap);
        r != prSuccess) {
      return r;
    }
    if (decision == nullptr)
      return nullArgument(kFunction, "decision", "pass this rank's prCommAgreeOnFailures decision");
    auto decided = peerreduce::capi::fromC(*decision, comm->comm->size());
    if (!decided.isOk()) return toResult(kFunction, decided.status());
    if ((decision->survivors & peerreduce::capi::bit(comm->comm->rank())) == 0) {
      // Checked before any collective: the survivors' bootstrap does not include this rank.
      return toResult(kFunction, peerreduce::peerLostError("rank " + std::to_string(comm->comm->rank()) +
                                                           " was declared failed by the agreement; it leaves the "
                                                           "world and makes no new communicator"));
    }
    peerreduce::Bootstrap& rendezvous = *new_bootstrap->bootstrap;
    const int rank = rendezvous.rank();
    const int nranks = rendezvous.size();
    const peerreduce::Config& config = comm->comm->config();
    // The survivors keep their devices.
    int device = -1;
    auto transport = peerreduce::capi::transportFor(*new_bootstrap, rank, nranks, config, comm->device, &device);
    if (!transport.isOk()) return toResult(kFunction, transport.status());
    auto shrunk =
        peerreduce::shrinkCommunicator(*comm->comm, *decided, new_bootstrap->bootstrap, std::move(transport).value());
    if (!shrunk.isOk()) return toResult(kFunction, shrunk.status());
    auto handle = std::make_unique<prComm>(prComm{std::move(shrunk).value(), new_bootstrap->owner, device,
                                                  new_bootstrap->bootstrap, new_bootstrap->placement});
    peerreduce::capi::liveComms().add(handle.get());
    *newcomm = handle.release();
    return prSuccess;
  });
}

}  // extern "C"
