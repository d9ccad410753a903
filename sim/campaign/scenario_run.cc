// runScenario: creation, operations with faults, recovery by abort + agreement + shrink, and the
// safety and liveness checks of every step.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>

#include "faults/faulty_transport.h"
#include "peerreduce/recovery.h"
#include "prng.h"
#include "rank_threads.h"
#include "scenario.h"
#include "sim_cluster.h"
#include "sim_fault_hooks.h"

namespace peerreduce::sim::campaign {
namespace {

using faults::Fault;
using faults::FaultController;
using faults::FaultKind;

constexpr std::size_t kGuardBytes = 64;
// Real time: every rank of a scenario is a thread of this process, so the agreement completes at once.
constexpr std::chrono::milliseconds kAgreementTimeout{30000};
constexpr std::byte kGuard{0xa5};
constexpr std::byte kPoison{0x5a};

// Rank `id`'s (original rank) input for operation `k`: bytes from the seed alone.
std::vector<std::byte> payload(std::uint64_t seed, int k, int id, std::size_t bytes) {
  Prng prng(deriveSeed(seed, static_cast<std::uint64_t>(k) * 1024 + static_cast<std::uint64_t>(id) + 1));
  std::vector<std::byte> out(bytes);
  for (auto& b : out) b = static_cast<std::byte>(prng.next() & 0xff);
  return out;
}

template <typename T>
void fold(ReduceOp op, std::byte* acc, const std::byte* in, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    T a, b;
    std::memcpy(&a, acc + i * sizeof(T), sizeof(T));
    std::memcpy(&b, in + i * sizeof(T), sizeof(T));
    using U = std::make_unsigned_t<T>;
    T r = a;
    if (op == ReduceOp::kSum) r = static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    if (op == ReduceOp::kMax) r = std::max(a, b);
    if (op == ReduceOp::kMin) r = std::min(a, b);
    std::memcpy(acc + i * sizeof(T), &r, sizeof(T));
  }
}

// The exact result over the inputs of `ids` (integers: every order gives the same bits).
std::vector<std::byte> reference(const ScenarioOp& op, const std::vector<std::vector<std::byte>>& inputs) {
  std::vector<std::byte> acc = inputs[0];
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    switch (op.dtype) {
      case DataType::kInt32:
        fold<std::int32_t>(op.op, acc.data(), inputs[i].data(), op.count);
        break;
      case DataType::kInt64:
        fold<std::int64_t>(op.op, acc.data(), inputs[i].data(), op.count);
        break;
      default:
        fold<std::uint8_t>(op.op, acc.data(), inputs[i].data(), op.count);
        break;
    }
  }
  return acc;
}

bool typedFailure(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kTimeout:
    case ErrorCode::kRemoteError:
    case ErrorCode::kPeerLost:
    case ErrorCode::kLinkDown:
    case ErrorCode::kAborted:
      return s.message().find("rank") != std::string::npos;
    case ErrorCode::kOutOfMemory:  // pinned memory for a host-staged copy, exhausted
      return s.message().find("rank") != std::string::npos &&
             s.message().find("PEERREDUCE_PINNED_LIMIT_BYTES") != std::string::npos;
    default:
      return false;
  }
}

bool typedCreationFailure(const Status& s) {
  return (s.code() == ErrorCode::kOutOfMemory || s.code() == ErrorCode::kUnavailable ||
          s.code() == ErrorCode::kCorrupt) &&
         s.message().find("rank") != std::string::npos;
}

class Runner {
 public:
  Runner(const Scenario& s, const ScenarioOptions& o) : s_(s), o_(o) { result_.seed = s.seed; }

  ScenarioResult run() {
    for (const Fault& f : s_.faults) result_.kinds[static_cast<std::size_t>(f.kind)].injected += 1;
    ids_.resize(static_cast<std::size_t>(s_.ranks));
    for (int r = 0; r < s_.ranks; ++r) ids_[static_cast<std::size_t>(r)] = r;
    topology_ = s_.topology;
    if (!createFirstWorld()) return result_;
    for (int k = 0; k < static_cast<int>(s_.ops.size()) && ok(); ++k) runOperation(k);
    if (controller_) result_.buggify_fired += controller_->sitesFired();
    return result_;
  }

 private:
  bool ok() const { return result_.safety_ok && result_.liveness_ok; }
  void safety(const std::string& what) {
    if (result_.safety_ok && result_.liveness_ok) result_.problem = "safety: " + what;
    result_.safety_ok = false;
  }
  void liveness(const std::string& what) {
    if (result_.safety_ok && result_.liveness_ok) result_.problem = "liveness: " + what;
    result_.liveness_ok = false;
  }
  void mix(std::uint64_t v) { result_.fingerprint = deriveSeed(result_.fingerprint ^ v, 0x51); }

  Config config() const {
    Config c;
    c.memory.pool_bytes = std::size_t{2} << 20;  // the smallest pool (IPC granularity)
    c.scratch_bytes = std::size_t{256} << 10;
    if (!s_.link_mask.empty()) {
      c.link_mask = s_.link_mask;
      c.memory.pinned_limit_bytes = kHostStagedPinnedLimitBytes;
    }
    return c;
  }

  // A simulated world of `n` ranks over topology_, with a new injector (creation faults, BUGGIFY
  // sites) and every rank's transport behind it.
  Status prepareWorld(int n, const std::vector<Fault>& creation_faults, std::uint32_t sites) {
    hooks_ = std::make_shared<SimFaultHooks>();
    controller_ = std::make_shared<FaultController>(n, hooks_);
    controller_->setSwallowErrorsCanary(o_.swallow_errors_canary);
    controller_->enableSites(sites, 0.1,
                             deriveSeed(s_.seed, 0xb0661 + static_cast<std::uint64_t>(result_.shrinks) * 2 +
                                                     (sites == s_.buggify_sites ? 0 : 1)));
    for (const Fault& f : creation_faults) PR_RETURN_IF_ERROR(controller_->inject(f));
    SimOptions options;
    options.seed = deriveSeed(s_.seed, 0x5100 + static_cast<std::uint64_t>(result_.shrinks));
    options.topology = topology_;
    options.wait_timeout_us = kScenarioWaitTimeoutUs;
    PR_ASSIGN_OR_RETURN(world_, SimWorld::create(n, options));
    hooks_->bind(world_);
    transports_.clear();
    for (int r = 0; r < n; ++r) {
      transports_.push_back(std::make_shared<faults::FaultyTransport>(world_->transport(r), controller_));
    }
    return Status::ok();
  }

  // Collective creation of the prepared world's communicators: `make(r)` on every rank's thread.
  Status createComms(const SimCluster::CommunicatorMaker& make) {
    PR_ASSIGN_OR_RETURN(cluster_, SimCluster::createWith(world_, make));
    return Status::ok();
  }

  // A world of the current survivors (ids_) over topology_, every transport behind the injector.
  Status createWorld(const std::vector<Fault>& creation_faults, std::uint32_t sites) {
    const int n = static_cast<int>(ids_.size());
    cluster_.reset();
    PR_RETURN_IF_ERROR(prepareWorld(n, creation_faults, sites));
    return createComms([&](int r) {
      return Communicator::create(r, n, world_->bootstrap(r), transports_[static_cast<std::size_t>(r)], config());
    });
  }

  bool createFirstWorld() {
    std::vector<Fault> creation;
    bool only_transient = true;
    for (const Fault& f : s_.faults) {
      if (!faults::isCreationFault(f.kind)) continue;
      creation.push_back(f);
      only_transient = only_transient && f.kind == FaultKind::kPoolExhaustedTransient;
    }
    const std::uint32_t sites = s_.buggify_sites;
    Status made = createWorld(creation, sites);
    mix(static_cast<std::uint64_t>(made.code()));
    if (made.isOk()) return true;
    result_.creation_refusals += 1;
    result_.error_codes[static_cast<std::size_t>(made.code())] += 1;
    if (!typedCreationFailure(made)) {
      safety("creation failed with an untyped error: " + made.toString());
      return false;
    }
    if (creation.empty() && !(sites & (1u << static_cast<int>(faults::BuggifySite::kOpenExhausted)))) {
      liveness("creation failed without a creation fault: " + made.toString());
      return false;
    }
    // Transient exhaustion heals by itself (it fired once); the other creation faults heal now, so
    // the retry's world has none of them, and the BUGGIFY exhaustion site is off. It must succeed.
    (void)only_transient;
    const std::uint32_t quiet = sites & ~(1u << static_cast<int>(faults::BuggifySite::kOpenExhausted));
    made = createWorld({}, quiet);
    if (!made.isOk()) {
      liveness("creation still fails after the creation faults healed: " + made.toString());
      return false;
    }
    return true;
  }

  int localRank(int id) const {
    for (std::size_t i = 0; i < ids_.size(); ++i) {
      if (ids_[i] == id) return static_cast<int>(i);
    }
    return -1;
  }

  // Injects the faults of operation k (original ranks mapped to the current world; faults on ranks
  // or links already gone are moot). mid_op: link deaths with a step, after the submits.
  std::vector<FaultKind> inject(int k, bool mid_op) {
    std::vector<FaultKind> kinds;
    for (const Fault& f : s_.faults) {
      if (faults::isCreationFault(f.kind) || f.op != k) continue;
      const bool link =
          f.kind == FaultKind::kLinkDown || f.kind == FaultKind::kLinkDownOneWay || f.kind == FaultKind::kHostLinkDown;
      if ((link && f.step > 0) != mid_op) continue;
      Fault local = f;
      local.rank = localRank(f.rank);
      local.peer = f.peer < 0 ? -1 : localRank(f.peer);
      if (local.rank < 0 || (f.peer >= 0 && local.peer < 0)) continue;
      if (local.peer >= 0 && !topology_.link(local.rank, local.peer).connected()) continue;
      if (!controller_->inject(local).isOk()) continue;
      kinds.push_back(f.kind);
    }
    return kinds;
  }

  void runOperation(int k) {
    const ScenarioOp& op = s_.ops[static_cast<std::size_t>(k)];
    const int n = static_cast<int>(ids_.size());
    const std::size_t bytes = op.count * dataTypeSize(op.dtype);
    std::vector<FaultKind> active = inject(k, false);
    std::vector<std::vector<std::byte>> inputs, send(static_cast<std::size_t>(n)), recv(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      inputs.push_back(payload(s_.seed, k, ids_[static_cast<std::size_t>(r)], bytes));
      // Guard, payload, guard, appended piece by piece: with `bytes + 2 * kGuardBytes` and a memcpy,
      // GCC 12 at -O3 could not rule out a wrapped size (-Wstringop-overflow, a false positive).
      const std::vector<std::byte>& input = inputs.back();
      auto& sb = send[static_cast<std::size_t>(r)];
      sb.assign(kGuardBytes, kGuard);
      sb.insert(sb.end(), input.begin(), input.end());
      sb.insert(sb.end(), kGuardBytes, kGuard);
      auto& rb = recv[static_cast<std::size_t>(r)];
      rb.assign(kGuardBytes, kGuard);
      rb.insert(rb.end(), bytes, kPoison);
      rb.insert(rb.end(), kGuardBytes, kGuard);
    }
    const double start_us = cluster_->world().stats().virtual_time_us;
    std::vector<Status> status(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      status[static_cast<std::size_t>(r)] = cluster_->comm(r).allreduce(
          send[static_cast<std::size_t>(r)].data() + kGuardBytes,
          recv[static_cast<std::size_t>(r)].data() + kGuardBytes, op.count, op.dtype, op.op);
    }
    const std::vector<FaultKind> mid = inject(k, true);
    active.insert(active.end(), mid.begin(), mid.end());
    cluster_->runUntilIdle().ignoreError();
    const double detection_us = cluster_->world().stats().virtual_time_us - start_us;
    const std::vector<std::byte> expected = reference(op, inputs);
    bool failed = false;
    for (int r = 0; r < n; ++r) {
      if (controller_->crashed(r) || controller_->stalledForever(r)) continue;  // not a survivor
      Status& st = status[static_cast<std::size_t>(r)];
      if (st.isOk()) st = cluster_->comm(r).asyncError();
      mix(static_cast<std::uint64_t>(st.code()) * 131 + static_cast<std::uint64_t>(r));
      const auto& rb = recv[static_cast<std::size_t>(r)];
      const auto& sb = send[static_cast<std::size_t>(r)];
      const std::string who = "op " + std::to_string(k) + " rank " + std::to_string(ids_[static_cast<std::size_t>(r)]);
      const bool guards_ok =
          std::all_of(rb.begin(), rb.begin() + kGuardBytes, [](std::byte b) { return b == kGuard; }) &&
          std::all_of(rb.end() - kGuardBytes, rb.end(), [](std::byte b) { return b == kGuard; }) &&
          std::memcmp(sb.data() + kGuardBytes, inputs[static_cast<std::size_t>(r)].data(), bytes) == 0;
      if (!guards_ok) safety(who + ": memory outside the output (guards or the send buffer) changed");
      if (st.isOk()) {
        if (std::memcmp(rb.data() + kGuardBytes, expected.data(), bytes) != 0) {
          safety(who + ": reported success with a wrong result");
        }
        continue;
      }
      failed = true;
      result_.error_codes[static_cast<std::size_t>(st.code())] += 1;
      if (!typedFailure(st)) safety(who + ": untyped failure " + st.toString());
    }
    if (!cluster_->world().raceReports().empty()) safety("race: " + cluster_->world().raceReports().front());
    mix(cluster_->world().traceFingerprint());
    for (FaultKind kind : active) {
      if (failed) result_.kinds[static_cast<std::size_t>(kind)].ops_failed += 1;
    }
    if (!failed) {
      result_.ops_ok += 1;
      return;
    }
    result_.ops_failed += 1;
    if (!ok()) return;
    recover(op, k, detection_us, active);
  }

  // Every rank aborts; each reports what its failure detector saw (Communicator::failureReport) and
  // takes part in the agreement over the world's bootstrap (failed ranks too: their threads live on);
  // the largest group shrinks (shrinkCommunicator), the failed ranks learn they are out (kPeerLost);
  // the shrunk world must complete a fault-free allreduce within kRecoveryBoundUs.
  void recover(const ScenarioOp& op, int k, double detection_us, const std::vector<FaultKind>& active) {
    const int n = static_cast<int>(ids_.size());
    for (int r = 0; r < n; ++r) cluster_->comm(r).abort();
    controller_->healTransient();
    std::vector<StatusOr<FailureDecision>> decided(static_cast<std::size_t>(n), internalError("agreement not run"));
    runOnRankThreads(n, [&](int r) {
      decided[static_cast<std::size_t>(r)] = agreeOnFailures(*cluster_->world().bootstrap(r), topology_,
                                                             cluster_->comm(r).failureReport(), kAgreementTimeout);
    });
    std::vector<FailureDecision> decisions;
    for (int r = 0; r < n; ++r) {
      const auto& d = decided[static_cast<std::size_t>(r)];
      if (!d.isOk()) {
        safety("rank " + std::to_string(ids_[static_cast<std::size_t>(r)]) +
               ": the agreement failed: " + d.status().toString());
        return;
      }
      decisions.push_back(*d);
    }
    for (const auto& d : decisions) {
      if (!std::binary_search(d.survivors.begin(), d.survivors.end(), d.rank)) continue;  // a failed rank
      if (!decisionsAgree(decisions, d.rank)) {
        safety("survivors of rank " + std::to_string(ids_[static_cast<std::size_t>(d.rank)]) +
               "'s group disagree on the failed set");
        return;
      }
    }
    const FailureDecision* chosen = largestGroup(decisions);  // the group that goes on
    if (!chosen) {
      liveness("op " + std::to_string(k) + ": no survivor group");
      return;
    }
    for (int r = 0; r < n; ++r) {
      const bool failed = controller_->crashed(r) || controller_->stalledForever(r);
      if (failed && std::binary_search(chosen->survivors.begin(), chosen->survivors.end(), r)) {
        safety("the agreement kept rank " + std::to_string(ids_[static_cast<std::size_t>(r)]) + ", which failed");
        return;
      }
    }
    auto plan = planShrink(topology_, *chosen);
    if (!plan.isOk()) {
      liveness("op " + std::to_string(k) + ": shrink: " + plan.status().toString());
      return;
    }
    std::vector<int> next_ids;
    for (int old : plan->old_rank) next_ids.push_back(ids_[static_cast<std::size_t>(old)]);
    const std::vector<int> old_ids = ids_;
    std::unique_ptr<SimCluster> old_cluster = std::move(cluster_);
    ids_ = next_ids;
    topology_ = plan->topology;
    result_.shrinks += 1;
    result_.buggify_fired += controller_->sitesFired();
    // The failed ranks (and the groups that do not go on) are told so by shrinkCommunicator.
    for (int r = 0; r < n; ++r) {
      if (std::binary_search(chosen->survivors.begin(), chosen->survivors.end(), r)) continue;
      if (std::binary_search(decisions[static_cast<std::size_t>(r)].survivors.begin(),
                             decisions[static_cast<std::size_t>(r)].survivors.end(), r)) {
        continue;  // a survivor of a smaller group: it would go on alone
      }
      auto out = shrinkCommunicator(old_cluster->comm(r), decisions[static_cast<std::size_t>(r)], nullptr, nullptr);
      if (out.isOk() || out.status().code() != ErrorCode::kPeerLost) {
        safety("rank " + std::to_string(old_ids[static_cast<std::size_t>(r)]) +
               ", declared failed, was not refused by the shrink: " + out.status().toString());
        return;
      }
    }
    auto shrink = [&](std::uint32_t sites) -> Status {
      PR_RETURN_IF_ERROR(prepareWorld(static_cast<int>(ids_.size()), {}, sites));
      return createComms([&](int i) {
        const int old = plan->old_rank[static_cast<std::size_t>(i)];
        return shrinkCommunicator(old_cluster->comm(old), decisions[static_cast<std::size_t>(old)],
                                  world_->bootstrap(i), transports_[static_cast<std::size_t>(i)]);
      });
    };
    Status made = shrink(s_.buggify_sites);
    if (!made.isOk() && typedCreationFailure(made)) {
      // The BUGGIFY exhaustion site may fire on the new world too: retry once with it off.
      result_.creation_refusals += 1;
      made = shrink(s_.buggify_sites & ~(1u << static_cast<int>(faults::BuggifySite::kOpenExhausted)));
    }
    if (!made.isOk()) {
      liveness("op " + std::to_string(k) + ": the shrunk world (" + plan->describe() +
               ") cannot be created: " + made.toString());
      return;
    }
    // The first allreduce after the shrink, on the survivors' inputs.
    const int m = static_cast<int>(ids_.size());
    const std::size_t bytes = op.count * dataTypeSize(op.dtype);
    std::vector<std::vector<std::byte>> inputs, out(static_cast<std::size_t>(m), std::vector<std::byte>(bytes));
    for (int r = 0; r < m; ++r) inputs.push_back(payload(s_.seed, k + 100, ids_[static_cast<std::size_t>(r)], bytes));
    for (int r = 0; r < m; ++r) {
      const Status st = cluster_->comm(r).allreduce(inputs[static_cast<std::size_t>(r)].data(),
                                                    out[static_cast<std::size_t>(r)].data(), op.count, op.dtype, op.op);
      if (!st.isOk()) {
        liveness("op " + std::to_string(k) + ": allreduce after the shrink refused: " + st.toString());
        return;
      }
    }
    const Status ran = cluster_->runUntilIdle();
    const double recovery_us = detection_us + cluster_->world().stats().virtual_time_us;
    const std::vector<std::byte> expected = reference(op, inputs);
    for (int r = 0; r < m && ok(); ++r) {
      const Status st = cluster_->comm(r).asyncError();
      if (!ran.isOk() || !st.isOk()) {
        liveness("op " + std::to_string(k) +
                 ": the allreduce after the shrink failed: " + (st.isOk() ? ran : st).toString());
      } else if (std::memcmp(out[static_cast<std::size_t>(r)].data(), expected.data(), bytes) != 0) {
        safety("op " + std::to_string(k) + ": the allreduce after the shrink reported success with a wrong result");
      }
    }
    if (cluster_->world().stats().virtual_time_us > kRecoveryBoundUs) {
      liveness("op " + std::to_string(k) + ": the allreduce after the shrink took " +
               std::to_string(cluster_->world().stats().virtual_time_us) + " us of virtual time (bound " +
               std::to_string(kRecoveryBoundUs) + ")");
    }
    mix(static_cast<std::uint64_t>(recovery_us * 1000.0));
    mix(cluster_->world().traceFingerprint());
    for (FaultKind kind : active) {
      auto& ko = result_.kinds[static_cast<std::size_t>(kind)];
      ko.recoveries += 1;
      ko.recovery_us += recovery_us;
      ko.max_recovery_us = std::max(ko.max_recovery_us, recovery_us);
    }
  }

  const Scenario& s_;
  const ScenarioOptions& o_;
  ScenarioResult result_;
  std::vector<int> ids_;  // original rank of each current rank
  Topology topology_;
  std::shared_ptr<SimFaultHooks> hooks_;
  std::shared_ptr<FaultController> controller_;
  std::shared_ptr<SimWorld> world_;
  std::vector<std::shared_ptr<Transport>> transports_;
  std::unique_ptr<SimCluster> cluster_;
};

}  // namespace

ScenarioResult runScenario(const Scenario& scenario, const ScenarioOptions& options) {
  Runner runner(scenario, options);
  ScenarioResult result = runner.run();
  return result;
}

}  // namespace peerreduce::sim::campaign
